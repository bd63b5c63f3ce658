#include "decode/field_names.h"

namespace weir::decode {
namespace {

bool IsStart(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool IsPart(char c) { return IsStart(c) || (c >= '0' && c <= '9'); }

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

std::optional<FieldNameProblem> CheckFieldName(std::string_view name, size_t max_length) {
  if (name.empty() || !IsStart(name.front())) return FieldNameProblem::kInvalidCharacters;
  for (const char c : name) {
    if (!IsPart(c)) return FieldNameProblem::kInvalidCharacters;
  }
  if (name == kInsertedAtColumn) return FieldNameProblem::kReserved;
  if (name.size() > max_length) return FieldNameProblem::kTooLong;
  return std::nullopt;
}

}  // namespace weir::decode
