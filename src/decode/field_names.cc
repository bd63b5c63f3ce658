#include "decode/field_names.h"

#include <array>

namespace weir::decode {
namespace {

bool IsStart(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool IsPart(char c) { return IsStart(c) || (c >= '0' && c <= '9'); }
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool StartsWithFolded(std::string_view name, std::string_view lower_prefix) {
  return name.size() >= lower_prefix.size() &&
         SameColumnName(name.substr(0, lower_prefix.size()), lower_prefix);
}

// DuckLake's system columns of inlined data (DuckLakeUtil::IsInlinedSystemColumn).
constexpr std::array<std::string_view, 3> kRenamedNames = {"row_id", "begin_snapshot",
                                                           "end_snapshot"};
constexpr std::string_view kDuckLakeInternalPrefix = "_ducklake_internal";

}  // namespace

std::string_view ToString(FieldNameProblem problem) {
  switch (problem) {
    case FieldNameProblem::kInvalidCharacters:
      return "invalid_name";
    case FieldNameProblem::kTooLong:
      return "name_too_long";
    case FieldNameProblem::kReserved:
      return "reserved_name";
  }
  return "unknown";
}

bool SameColumnName(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

std::string FoldName(std::string_view name) {
  std::string folded(name);
  for (char& c : folded) c = Lower(c);
  return folded;
}

std::string RenamedFieldName(std::string_view name) { return std::string(name) + "_"; }

FieldNameCheck CheckFieldName(std::string_view name, size_t max_length) {
  if (name.empty() || !IsStart(name.front())) return {FieldNameProblem::kInvalidCharacters};
  for (const char c : name) {
    if (!IsPart(c)) return {FieldNameProblem::kInvalidCharacters};
  }
  if (SameColumnName(name, kInsertedAtColumn) || StartsWithFolded(name, kDuckLakeInternalPrefix)) {
    return {FieldNameProblem::kReserved};
  }
  bool renamed = false;
  for (const std::string_view reserved : kRenamedNames) renamed |= SameColumnName(name, reserved);
  if (name.size() + (renamed ? 1 : 0) > max_length) return {FieldNameProblem::kTooLong};
  return {std::nullopt, renamed};
}

}  // namespace weir::decode
