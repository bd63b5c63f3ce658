#include "config/validate_filters.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "config/validate.h"
#include "decode/field_names.h"
#include "records/filter_values.h"
#include "records/typed_columns.h"
#include "records/typed_text.h"

namespace weir::config {
namespace {

using FilterProblems = std::vector<std::pair<std::string, std::string>>;

// True for an HTTP header name (RFC 9110 token characters).
bool IsHeaderName(const std::string& name) {
  if (name.empty()) return false;
  for (const char c : name) {
    const bool token = std::isalnum(static_cast<unsigned char>(c)) ||
                       std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    if (!token) return false;
  }
  return true;
}

// True when `column` is pinned to uuid by typed_columns (names resolve case-insensitively).
bool UuidPinned(const DatasetSettings& dataset, const std::string& column) {
  auto typed = records::ParseTypedColumns(dataset.typed_columns);
  if (!typed.ok()) return false;  // typed_columns reports its own problem
  for (const auto& pin : *typed) {
    if (pin.type == records::TypedKind::kUuid && decode::SameColumnName(pin.column, column)) {
      return true;
    }
  }
  return false;
}

// One direction: its field and its values, alone and together.
void CheckDirection(const DatasetSettings& dataset, const std::string& field,
                    const std::vector<std::string>& values, const char* field_setting,
                    const char* values_setting, FilterProblems* problems) {
  if (field.empty() && values.empty()) return;
  // Named by the one that is set, so the error says where it came from.
  if (field.empty()) {
    problems->emplace_back(values_setting, fmt::format("needs {} set too", field_setting));
    return;
  }
  if (values.empty()) {
    problems->emplace_back(field_setting, fmt::format("needs {} set too", values_setting));
    return;
  }
  if (!IsIdentifier(field)) {
    problems->emplace_back(
        field_setting,
        fmt::format("value \"{}\" is not a column name ([A-Za-z_][A-Za-z0-9_]*)", field));
  }
  if (!dataset.mapping.empty()) {
    bool mapped = false;
    for (const auto& [column, expression] : dataset.mapping) {
      mapped = mapped || decode::SameColumnName(column, field);
    }
    if (!mapped) {
      problems->emplace_back(field_setting,
                             fmt::format("value \"{}\" is not a column of the mapping (the "
                                         "filter sees the mapped columns)",
                                         field));
    }
  }
  if (!UuidPinned(dataset, field)) {
    auto parsed = records::ParseFilterValues(values);
    if (!parsed.ok()) problems->emplace_back(values_setting, parsed.status().message());
    return;
  }
  // A uuid column: millpond reads an all-integer list as integers (Python's int() has no
  // range), which can never be UUIDs; otherwise every value must be one.
  const bool all_integers = std::all_of(values.begin(), values.end(), [](const std::string& v) {
    bool out_of_range = false;
    return records::ParseIntegerToken(v, &out_of_range).has_value() || out_of_range;
  });
  if (all_integers) {
    problems->emplace_back(values_setting,
                           fmt::format("\"{}\" is a uuid column (typed_columns) and these "
                                       "values are all integers; write each UUID in its "
                                       "canonical hyphenated form",
                                       field));
    return;
  }
  for (const std::string& value : values) {
    if (!records::ParseUuidText(value)) {
      problems->emplace_back(
          values_setting,
          fmt::format("value \"{}\" is not a UUID, and \"{}\" is a uuid column (typed_columns)",
                      value, field));
    }
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> FilterSettingProblems(
    const DatasetSettings& dataset) {
  FilterProblems problems;
  const FilterSettings& f = dataset.filter;
  CheckDirection(dataset, f.keep_field, f.keep_values, "filter.keep_field", "filter.keep_values",
                 &problems);
  CheckDirection(dataset, f.drop_field, f.drop_values, "filter.drop_field", "filter.drop_values",
                 &problems);
  const IncludeValuesSettings& iv = dataset.include_values;
  std::string mode;
  for (const char c : iv.mode)
    mode += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!mode.empty() && mode != "shadow" && mode != "authoritative") {
    problems.emplace_back("include_values.mode",
                          fmt::format("value \"{}\" is not one of shadow, authoritative", iv.mode));
  }
  if (iv.url.empty()) {
    // A mode or auth without the URL means a dynamic source was intended.
    if (!iv.mode.empty()) {
      problems.emplace_back("include_values.mode", "only valid with include_values.url set");
    }
    if (!iv.auth_header_name.empty()) {
      problems.emplace_back("include_values.auth_header_name",
                            "only valid with include_values.url set");
    }
    if (!iv.auth_token.empty()) {
      problems.emplace_back("include_values.auth_token", "only valid with include_values.url set");
    }
    return problems;
  }
  if (f.keep_field.empty() || f.keep_values.empty()) {
    problems.emplace_back("include_values.url",
                          "needs the allowlist: set filter.keep_field and filter.keep_values "
                          "(the static values are the pins)");
  }
  const bool http = iv.url.rfind("http://", 0) == 0 || iv.url.rfind("https://", 0) == 0;
  if (!http || iv.url.size() <= 8 || iv.url.find_first_of(" \r\n\t") != std::string::npos) {
    problems.emplace_back("include_values.url",
                          fmt::format("value \"{}\" is not an http:// or https:// URL", iv.url));
  }
  if (iv.auth_header_name.empty() != iv.auth_token.empty()) {
    problems.emplace_back(iv.auth_header_name.empty() ? "include_values.auth_token"
                                                      : "include_values.auth_header_name",
                          "include_values.auth_header_name and include_values.auth_token are "
                          "set together or not at all");
  }
  if (!iv.auth_header_name.empty() && !IsHeaderName(iv.auth_header_name)) {
    problems.emplace_back(
        "include_values.auth_header_name",
        fmt::format("value \"{}\" is not an HTTP header name", iv.auth_header_name));
  }
  if (iv.auth_token.find_first_of("\r\n") != std::string::npos) {
    problems.emplace_back("include_values.auth_token", "must not hold a line break");
  }
  return problems;
}

}  // namespace weir::config
