#include "observe/html.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace weir::observe {
namespace {

constexpr int kChartWidth = 360, kChartHeight = 90, kPad = 18;

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string DisplayNumber(double value) {
  if (!std::isfinite(value)) return "-";
  if (std::fabs(value) >= 100 && std::fabs(value) < 1e15) value = std::round(value);
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    std::string digits = fmt::format("{}", static_cast<int64_t>(std::fabs(value)));
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0) out += ' ';
      out += digits[i];
    }
    return value < 0 ? "-" + out : out;
  }
  return fmt::format("{:.3g}", value);
}

std::string LineChartSvg(std::string_view id, const std::vector<ChartLine>& lines,
                         std::string_view unit, std::string_view span) {
  size_t points = 0;
  double max = 0;
  for (const ChartLine& line : lines) {
    points = std::max(points, line.values.size());
    for (double v : line.values) max = std::max(max, std::isfinite(v) ? v : 0.0);
  }
  std::string out = fmt::format(
      "<svg id=\"{}\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" "
      "height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" data-points=\"{}\">",
      HtmlEscape(id), kChartWidth, kChartHeight, kChartWidth, kChartHeight, points);
  out += fmt::format(
      "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#fafafa\" stroke=\"#ddd\"/>",
      kChartWidth, kChartHeight);
  if (points < 2) {
    out += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\" fill=\"#888\">"
        "collecting samples (one per 10 s)</text></svg>",
        kChartWidth / 2, kChartHeight / 2);
    return out;
  }
  const double top = max > 0 ? max : 1;
  const double plot_w = kChartWidth - 2.0 * kPad, plot_h = kChartHeight - 2.0 * kPad;
  for (const ChartLine& line : lines) {
    std::string coords;
    for (size_t i = 0; i < line.values.size(); ++i) {
      const double v = std::isfinite(line.values[i]) ? line.values[i] : 0.0;
      const double x = kPad + plot_w * static_cast<double>(i) / static_cast<double>(points - 1);
      const double y = kPad + plot_h * (1 - v / top);
      coords += fmt::format("{}{:.1f},{:.1f}", coords.empty() ? "" : " ", x, y);
    }
    out += fmt::format(
        "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\">"
        "<title>{}</title></polyline>",
        line.color, coords, HtmlEscape(line.label));
  }
  out += fmt::format(
      "<text x=\"{}\" y=\"12\" font-size=\"10\" fill=\"#555\">max {} {}</text>"
      "<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#555\" text-anchor=\"end\">{}</text>"
      "</svg>",
      kPad, HtmlEscape(DisplayNumber(max)), HtmlEscape(unit), kChartWidth - kPad, kChartHeight - 4,
      HtmlEscape(span));
  return out;
}

std::string BarChartSvg(std::string_view id, const std::vector<std::string>& labels,
                        const std::vector<int64_t>& counts) {
  const size_t bars = std::min(labels.size(), counts.size());
  int64_t max = 1;
  for (size_t i = 0; i < bars; ++i) max = std::max(max, counts[i]);
  const double slot = bars > 0 ? (kChartWidth - 2.0 * kPad) / static_cast<double>(bars) : 0;
  const double plot_h = kChartHeight - 2.0 * kPad - 6;
  std::string out = fmt::format(
      "<svg id=\"{}\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" "
      "height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">"
      "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#fafafa\" stroke=\"#ddd\"/>",
      HtmlEscape(id), kChartWidth, kChartHeight, kChartWidth, kChartHeight, kChartWidth,
      kChartHeight);
  for (size_t i = 0; i < bars; ++i) {
    const double h = plot_h * static_cast<double>(counts[i]) / static_cast<double>(max);
    const double x = kPad + slot * static_cast<double>(i);
    const double y = kPad + plot_h - h;
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#4a7\">"
        "<title>{}: {}</title></rect>",
        x + 1, y, std::max(1.0, slot - 2), h, HtmlEscape(labels[i]), counts[i]);
    if (counts[i] > 0) {
      out += fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"9\" text-anchor=\"middle\" "
          "fill=\"#333\">{}</text>",
          x + slot / 2, y - 2, counts[i]);
    }
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{}\" font-size=\"8\" text-anchor=\"middle\" fill=\"#555\">{}"
        "</text>",
        x + slot / 2, kChartHeight - 4, HtmlEscape(labels[i]));
  }
  out += "</svg>";
  return out;
}

}  // namespace weir::observe
