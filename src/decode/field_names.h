// Which JSON keys may become column names.
#pragma once

#include <optional>
#include <string_view>

namespace weir::decode {

// The reserved per-flush commit timestamp column.
inline constexpr std::string_view kInsertedAtColumn = "_inserted_at";

// Why a key is not accepted as a column name (also the counter label).
enum class FieldNameProblem { kInvalidCharacters, kTooLong, kReserved };

std::string_view ToString(FieldNameProblem problem);

// nullopt when `name` matches [A-Za-z_][A-Za-z0-9_]*, is at most `max_length` bytes and is
// not reserved; otherwise the first problem found.
std::optional<FieldNameProblem> CheckFieldName(std::string_view name, size_t max_length);

}  // namespace weir::decode
