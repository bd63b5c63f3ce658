#include "observe/exposition.h"

#include <charconv>
#include <cmath>

#include "base/check.h"
#include "base/number_text.h"

namespace weir::observe {
namespace {

bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

}  // namespace

std::string FormatSampleValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == 0) return "0";  // also -0, which Prometheus would show as "-0"
  if (value == std::trunc(value)) {
    // Fixed notation keeps large integral values (byte counts) free of exponents; the largest
    // double has 309 digits.
    char buffer[400];
    const auto result =
        std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed);
    WEIR_CHECK(result.ec == std::errc());
    return std::string(buffer, result.ptr);
  }
  return ShortestText(value);
}

bool IsValidMetricName(std::string_view name) {
  if (name.empty() || !(IsNameStart(name[0]) || name[0] == ':')) return false;
  for (char c : name) {
    if (!IsNameChar(c) && c != ':') return false;
  }
  return true;
}

bool IsValidLabelName(std::string_view name) {
  if (name.empty() || !IsNameStart(name[0]) || name.starts_with("__")) return false;
  for (char c : name) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

void AppendEscapedLabelValue(std::string& out, std::string_view value) {
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
}

void AppendLabels(std::string& out, const Labels& labels, std::string_view extra_name,
                  std::string_view extra_value) {
  if (labels.empty() && extra_name.empty()) return;
  out += '{';
  bool first = true;
  auto append_one = [&](std::string_view name, std::string_view value) {
    if (!first) out += ',';
    first = false;
    out += name;
    out += "=\"";
    AppendEscapedLabelValue(out, value);
    out += '"';
  };
  for (const auto& [name, value] : labels) append_one(name, value);
  if (!extra_name.empty()) append_one(extra_name, extra_value);
  out += '}';
}

void AppendFamilyHeader(std::string& out, std::string_view name, std::string_view help,
                        std::string_view type) {
  out += "# HELP ";
  out += name;
  out += ' ';
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void AppendSample(std::string& out, std::string_view name, const Labels& labels, double value) {
  out += name;
  AppendLabels(out, labels);
  out += ' ';
  out += FormatSampleValue(value);
  out += '\n';
}

void AppendGauge(std::string& out, std::string_view name, std::string_view help,
                 const std::vector<GaugeSample>& samples) {
  AppendFamilyHeader(out, name, help, "gauge");
  for (const GaugeSample& sample : samples) AppendSample(out, name, sample.labels, sample.value);
}

void AppendGauge(std::string& out, std::string_view name, std::string_view help,
                 const Labels& labels, double value) {
  AppendFamilyHeader(out, name, help, "gauge");
  AppendSample(out, name, labels, value);
}

}  // namespace weir::observe
