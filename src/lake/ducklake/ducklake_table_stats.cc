// DuckLakeTable's table and column statistics, merged into the catalog in a commit's
// transaction.
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "lake/ducklake/ducklake_table.h"
#include "lake/ducklake/stats_text.h"

namespace weir::lake::ducklake {

Status DuckLakeTable::UpdateTableStats(CatalogDb& db, const std::vector<DataFile>& files) {
  int64_t rows = 0, bytes = 0;
  struct Merged {
    bool contains_null = false;
    std::optional<std::string> min, max;
    bool has_values = false;
    bool bounds_unknown = false;
  };
  std::map<int64_t, ColumnType> types;
  for (const auto& c : columns_) types[c.id] = c.type;
  std::map<int64_t, Merged> merged;
  for (const auto& file : files) {
    rows += file.info.rows;
    bytes += file.info.size_bytes;
    for (const auto& stats : file.info.columns) {
      auto& m = merged[stats.field_id];
      const ColumnType type = types[stats.field_id];
      m.contains_null |= stats.null_count > 0;
      if (stats.value_count <= stats.null_count) continue;
      m.has_values = true;
      const auto lo = StatText(type, stats.min), hi = StatText(type, stats.max);
      if (!lo || !hi) {
        m.bounds_unknown = true;
        continue;
      }
      if (!m.min || CompareStat(type, *lo, *m.min) < 0) m.min = lo;
      if (!m.max || CompareStat(type, *hi, *m.max) > 0) m.max = hi;
    }
  }
  WEIR_ASSIGN_OR_RAISE(auto updated,
                       db.Execute("UPDATE ducklake_table_stats SET record_count = record_count "
                                  "+ $1, next_row_id = next_row_id + $1, file_size_bytes = "
                                  "file_size_bytes + $2 WHERE table_id = $3",
                                  {rows, bytes, table_id_}));
  if (updated == 0) {
    WEIR_RETURN_NOT_OK(
        db.Execute("INSERT INTO ducklake_table_stats (table_id, record_count, "
                   "next_row_id, file_size_bytes) VALUES ($1, $2, $2, $3)",
                   {table_id_, rows, bytes}));
  }
  // The table's column statistics, read once; new columns are inserted together, changed
  // ones updated.
  WEIR_ASSIGN_OR_RAISE(auto rows_before,
                       db.Query("SELECT column_id, contains_null, min_value, max_value FROM "
                                "ducklake_table_column_stats WHERE table_id = $1",
                                {table_id_}));
  std::map<int64_t, const SqlRow*> existing;
  for (const auto& row : rows_before) {
    WEIR_ASSIGN_OR_RAISE(auto column_id, ToInt(row[0], "column_id"));
    existing[column_id] = &row;
  }
  BatchInsert inserts(db,
                      "ducklake_table_column_stats (table_id, column_id, contains_null, "
                      "contains_nan, min_value, max_value, extra_stats)",
                      7);
  std::string updates;  // one UPDATE ... FROM (VALUES ...) for the changed columns
  std::vector<SqlValue> update_params = {table_id_};
  for (auto& [column_id, m] : merged) {
    const ColumnType type = types[column_id];
    if (m.bounds_unknown) m.min.reset(), m.max.reset();
    const auto found = existing.find(column_id);
    if (found == existing.end()) {
      const bool floating = type == ColumnType::kDouble || type == ColumnType::kFloat;
      WEIR_RETURN_NOT_OK(inserts.Add({table_id_, column_id, m.contains_null,
                                      floating ? SqlValue{false} : SqlValue{},
                                      m.min ? SqlValue{*m.min} : SqlValue{},
                                      m.max ? SqlValue{*m.max} : SqlValue{}, SqlValue{}}));
      continue;
    }
    const SqlRow& row = *found->second;
    const bool contains_null = m.contains_null || ToBool(row[1]);
    std::optional<std::string> lo = row[2], hi = row[3];
    if (m.has_values) {
      // Unknown bounds on either side make the table's bounds unknown.
      if (m.bounds_unknown) {
        lo.reset(), hi.reset();
      } else {
        if (!lo || CompareStat(type, *m.min, *lo) < 0) lo = m.min;
        if (!hi || CompareStat(type, *m.max, *hi) > 0) hi = m.max;
      }
    }
    if (contains_null == ToBool(row[1]) && lo == row[2] && hi == row[3]) continue;
    const size_t n = update_params.size();
    updates += fmt::format(
        "{}(CAST(${} AS BIGINT), CAST(${} AS BOOLEAN), CAST(${} AS VARCHAR), "
        "CAST(${} AS VARCHAR))",
        updates.empty() ? "" : ", ", n + 1, n + 2, n + 3, n + 4);
    update_params.push_back(column_id);
    update_params.push_back(contains_null);
    update_params.push_back(lo ? SqlValue{*lo} : SqlValue{});
    update_params.push_back(hi ? SqlValue{*hi} : SqlValue{});
  }
  if (!updates.empty()) {
    WEIR_RETURN_NOT_OK(
        db.Execute("UPDATE ducklake_table_column_stats SET contains_null = v.column2, min_value = "
                   "v.column3, max_value = v.column4 FROM (VALUES " +
                       updates +
                       ") AS v WHERE ducklake_table_column_stats.table_id = $1 AND "
                       "ducklake_table_column_stats.column_id = v.column1",
                   update_params)
            .status());
  }
  WEIR_RETURN_NOT_OK(inserts.Finish());
  return Status::OK();
}

}  // namespace weir::lake::ducklake
