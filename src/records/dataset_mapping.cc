#include "records/dataset_mapping.h"

#include <set>

#include <fmt/format.h>

#include "decode/field_names.h"

namespace weir::records {
namespace {

Status RefuseMapping(std::string message) {
  return ClassifiedError(ErrorClass::kFatal, "records", "invalid_mapping", std::move(message));
}

}  // namespace

Result<std::shared_ptr<const jmespath::Mapping>> CompileDatasetMapping(
    const std::map<std::string, std::string>& columns, size_t max_name_length) {
  std::vector<jmespath::MappingColumn> list;
  std::map<std::string, std::string> folded;  // folded name → the name given
  for (const auto& [column, expression] : columns) {
    const decode::FieldNameCheck check = decode::CheckFieldName(column, max_name_length);
    if (check.problem) {
      return RefuseMapping(fmt::format(
          "column \"{}\": not a column name weir writes ({}; names are [A-Za-z_][A-Za-z0-9_]*, "
          "at most {} bytes, and not _inserted_at or _ducklake_internal*)",
          column, decode::ToString(*check.problem), max_name_length));
    }
    if (check.renamed) {
      return RefuseMapping(fmt::format(
          "column \"{}\": reserved by DuckLake (a key of that name is written as \"{}\"); name "
          "the column differently",
          column, decode::RenamedFieldName(column)));
    }
    const auto [at, added] = folded.emplace(decode::FoldName(column), column);
    if (!added) {
      return RefuseMapping(
          fmt::format("columns \"{}\" and \"{}\" are the same column (names are "
                      "case-insensitive)",
                      at->second, column));
    }
    if (expression.empty())
      return RefuseMapping(fmt::format("column \"{}\": empty expression", column));
    list.push_back({column, expression});
  }
  auto mapping = jmespath::Mapping::Compile(std::move(list));
  if (!mapping.ok()) return RefuseMapping(mapping.status().message());
  return mapping;
}

}  // namespace weir::records
