// Pieces of the Prometheus text exposition format 0.0.4, shared by the registry and by
// collectors that render their own text (librdkafka statistics rendered as gauges by the kafka
// stage). Pure functions over strings; safe from any thread.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace weir::observe {

// Label name → value. Ordered by name, so one label set renders and compares the same however
// the caller wrote it.
using Labels = std::map<std::string, std::string, std::less<>>;

// The text of a sample value: integral values without exponent or point ("1234"), other finite
// values in the shortest form that reads back exactly ("0.1"), and "+Inf", "-Inf", "NaN".
std::string FormatSampleValue(double value);

// Whether `name` may name a metric family ([a-zA-Z_:][a-zA-Z0-9_:]*).
bool IsValidMetricName(std::string_view name);

// Whether `name` may name a label ([a-zA-Z_][a-zA-Z0-9_]*, not starting with "__").
bool IsValidLabelName(std::string_view name);

// Appends `value` with backslash, double quote and newline escaped, as a label value needs.
void AppendEscapedLabelValue(std::string& out, std::string_view value);

// Appends `{a="x",b="y"}` with the optional extra label (a histogram's `le`) last; appends
// nothing when there are no labels at all.
void AppendLabels(std::string& out, const Labels& labels, std::string_view extra_name = {},
                  std::string_view extra_value = {});

// Appends a family's `# HELP` (backslash and newline escaped) and `# TYPE` lines.
void AppendFamilyHeader(std::string& out, std::string_view name, std::string_view help,
                        std::string_view type);

// Appends one sample line: `name{labels} value`.
void AppendSample(std::string& out, std::string_view name, const Labels& labels, double value);

struct GaugeSample {
  Labels labels;
  double value = 0;
};

// Appends a whole gauge family (header, then one line per sample). The exposition format
// allows one header per family, so a collector appends each family once, with all its series.
void AppendGauge(std::string& out, std::string_view name, std::string_view help,
                 const std::vector<GaugeSample>& samples);

// Appends a gauge family with a single series.
void AppendGauge(std::string& out, std::string_view name, std::string_view help,
                 const Labels& labels, double value);

}  // namespace weir::observe
