#include "ingest/column_plan.h"

#include <unordered_map>

#include "decode/field_names.h"
#include "ingest/coerce.h"

namespace weir::ingest {

lake::ColumnType JoinColumnTypes(lake::ColumnType a, lake::ColumnType b) {
  using lake::ColumnType;
  if (a == b) return a;
  const auto numeric = [](ColumnType t) {
    return t == ColumnType::kBigint || t == ColumnType::kDouble;
  };
  if (numeric(a) && numeric(b)) return ColumnType::kDouble;
  return ColumnType::kVarchar;
}

ColumnPlan PlanColumns(const arrow::Schema& batch, const std::vector<lake::Column>& live,
                       const std::set<std::string>& refused) {
  ColumnPlan plan;
  plan.sources.resize(live.size());
  // Folded name → live column; the first of two live spellings wins (a table made by a
  // case-sensitive writer could hold both).
  std::unordered_map<std::string, size_t> live_index;
  for (size_t i = 0; i < live.size(); ++i)
    live_index.try_emplace(decode::FoldName(live[i].name), i);
  std::unordered_map<std::string, size_t> new_index;
  for (int f = 0; f < batch.num_fields(); ++f) {
    const auto& field = *batch.field(f);
    const std::string folded = decode::FoldName(field.name());
    if (auto it = live_index.find(folded); it != live_index.end()) {
      plan.sources[it->second].push_back(f);
      continue;
    }
    if (refused.contains(folded)) {
      plan.refused.push_back(f);
      continue;
    }
    const lake::ColumnType type = ColumnTypeOf(*field.type());
    if (auto it = new_index.find(folded); it != new_index.end()) {
      auto& column = plan.missing[it->second];
      column.type = JoinColumnTypes(column.type, type);
      column.fields.push_back(f);
      continue;
    }
    new_index.emplace(folded, plan.missing.size());
    plan.missing.push_back({field.name(), type, {f}});
  }
  return plan;
}

}  // namespace weir::ingest
