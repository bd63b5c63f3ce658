#include "records/filter_values.h"

#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

namespace weir::records {
namespace {

void Normalize(FilterValues& values) {
  auto& ints = values.integers;
  std::sort(ints.begin(), ints.end());
  ints.erase(std::unique(ints.begin(), ints.end()), ints.end());
  auto& texts = values.texts;
  std::sort(texts.begin(), texts.end());
  texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
}

}  // namespace

std::string_view ToString(FilterValueKind kind) {
  return kind == FilterValueKind::kInteger ? "int" : "str";
}

std::vector<std::string> FilterValues::Labels() const {
  if (kind == FilterValueKind::kText) return texts;
  std::vector<std::string> out;
  out.reserve(integers.size());
  for (const int64_t v : integers) out.push_back(std::to_string(v));
  return out;
}

std::optional<int64_t> ParseIntegerToken(std::string_view token, bool* out_of_range) {
  if (out_of_range != nullptr) *out_of_range = false;
  size_t at = 0;
  bool negative = false;
  if (at < token.size() && (token[at] == '+' || token[at] == '-')) {
    negative = token[at] == '-';
    ++at;
  }
  if (at >= token.size()) return std::nullopt;
  // Digits with single underscores between digits (PEP 515), as Python's int() takes them.
  uint64_t magnitude = 0;
  bool overflow = false;
  bool previous_digit = false;
  constexpr uint64_t kLimit = uint64_t{std::numeric_limits<int64_t>::max()} + 1;
  for (; at < token.size(); ++at) {
    const char c = token[at];
    if (c == '_') {
      if (!previous_digit || at + 1 >= token.size()) return std::nullopt;
      previous_digit = false;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    previous_digit = true;
    const auto digit = static_cast<uint64_t>(c - '0');
    if (magnitude > (kLimit - digit) / 10) {
      overflow = true;
    } else {
      magnitude = magnitude * 10 + digit;
    }
  }
  if (!previous_digit) return std::nullopt;
  if (overflow || (!negative && magnitude == kLimit)) {
    if (out_of_range != nullptr) *out_of_range = true;
    return std::nullopt;
  }
  if (negative)
    return magnitude == kLimit ? std::numeric_limits<int64_t>::min()
                               : -static_cast<int64_t>(magnitude);
  return static_cast<int64_t>(magnitude);
}

Result<FilterValues> ParseFilterValues(const std::vector<std::string>& tokens) {
  if (tokens.empty()) return Status::Invalid("must contain at least one value");
  FilterValues values;
  bool all_integers = true;
  for (const std::string& token : tokens) {
    bool out_of_range = false;
    const auto parsed = ParseIntegerToken(token, &out_of_range);
    if (out_of_range) {
      return Status::Invalid("value \"", token,
                             "\" is an integer beyond the int64 range no column holds");
    }
    if (!parsed) {
      all_integers = false;
      break;
    }
    values.integers.push_back(*parsed);
  }
  if (!all_integers) {
    values.kind = FilterValueKind::kText;
    values.integers.clear();
    values.texts = tokens;
  }
  Normalize(values);
  return values;
}

Result<FilterValues> ParseFilterValuesJson(std::string_view body) {
  nlohmann::json parsed =
      nlohmann::json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Status::Invalid("the response is not JSON");
  if (!parsed.is_array()) {
    return Status::Invalid("the response is a JSON ", parsed.type_name(), ", expected an array");
  }
  FilterValues values;
  bool all_integers = true;
  for (const auto& element : parsed) {
    if (element.is_object() || element.is_array()) {
      return Status::Invalid("the array must hold only scalars");
    }
    if (element.is_number_unsigned() &&
        element.get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()}) {
      return Status::Invalid("the array holds an integer beyond int64: ", element.dump());
    }
    if (!element.is_number_integer()) all_integers = false;
  }
  if (all_integers) {
    for (const auto& element : parsed) values.integers.push_back(element.get<int64_t>());
  } else {
    values.kind = FilterValueKind::kText;
    for (const auto& element : parsed) {
      if (element.is_string()) {
        values.texts.push_back(element.get<std::string>());
      } else if (element.is_boolean()) {
        values.texts.emplace_back(element.get<bool>() ? "True" : "False");
      } else if (element.is_null()) {
        values.texts.emplace_back("None");
      } else {
        values.texts.push_back(element.dump());
      }
    }
  }
  Normalize(values);
  return values;
}

}  // namespace weir::records
