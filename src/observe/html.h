// HTML text helpers for the status page and its inline SVG charts. Pure functions; safe from
// any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace weir::observe {

// `text` with & < > " ' escaped, safe in element text and in quoted attribute values.
std::string HtmlEscape(std::string_view text);

// A number for display: integers, and values of 100 or more rounded to one, in groups of three
// digits ("1 234 567"); smaller values with 3 significant digits ("12.3", "0.25").
std::string DisplayNumber(double value);

// A byte count with a binary unit ("1.5 MiB").

struct ChartLine {
  std::string label;
  std::string color;  // a CSS colour literal of ours, never user text
  std::vector<double> values;
};

// An inline SVG line chart (no external reference) of `lines` over equal steps, with the
// maximum and the time span labelled; a note instead when there are fewer than two points.
std::string LineChartSvg(std::string_view id, const std::vector<ChartLine>& lines,
                         std::string_view unit, std::string_view span);

// An inline SVG bar chart: one bar per label, the count above it.
std::string BarChartSvg(std::string_view id, const std::vector<std::string>& labels,
                        const std::vector<int64_t>& counts);

}  // namespace weir::observe
