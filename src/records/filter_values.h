// The value sets of the record filters (issue 14; millpond's MILLPOND_FILTER_VALUES,
// MILLPOND_FILTER_DROP_VALUES and the include-values endpoint's JSON array).
//
// A set is homogeneous: integers when every configured token is an integer, text otherwise
// (millpond's auto-detection: "2,4,1956" is {2, 4, 1956}; "2,four" is {"2", "four"}). An integer
// token is what Python's int() reads from trimmed text: an optional sign, then decimal digits
// with single `_` between digits ("+7", "-3", "007", "1_000"). Members are kept sorted and
// unique.
//
// Threading: plain values, immutable once built.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace weir::records {

enum class FilterValueKind { kInteger, kText };

// "int" or "str" (millpond's names in its refusal and warning texts).
std::string_view ToString(FilterValueKind kind);

struct FilterValues {
  FilterValueKind kind = FilterValueKind::kInteger;
  std::vector<int64_t> integers;   // kInteger: sorted, unique
  std::vector<std::string> texts;  // kText: sorted, unique

  size_t size() const { return kind == FilterValueKind::kInteger ? integers.size() : texts.size(); }
  bool empty() const { return size() == 0; }
  // Each member as text (integers in decimal), in set order; the label of matched counters.
  std::vector<std::string> Labels() const;
  friend bool operator==(const FilterValues&, const FilterValues&) = default;
};

// The integer a token stands for under Python's int() rules; nullopt when it is not one.
// `out_of_range` is set when it is an integer beyond int64.
std::optional<int64_t> ParseIntegerToken(std::string_view token, bool* out_of_range = nullptr);

// A set from configured tokens (already split on commas, trimmed, empties dropped). Invalid when
// there are none, or when an integer token is beyond int64 (no column of weir holds it; millpond
// would fail every batch over it).
Result<FilterValues> ParseFilterValues(const std::vector<std::string>& tokens);

// A set from the include-values endpoint's body: a JSON array of scalars. All integers (JSON
// true/false are not integers): an integer set; otherwise each element's text (strings as they
// are, true/false/null as Python prints them — True, False, None — and other numbers as sent).
// Invalid: not JSON, not an array, an array holding an object or array, an integer beyond int64.
Result<FilterValues> ParseFilterValuesJson(std::string_view body);

}  // namespace weir::records
