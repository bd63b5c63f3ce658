// The bindings between the settings table's rows and the settings structs, shared by the
// files that hold the table's parts (setting_table.cc, setting_table_serve.cc). Internal to
// src/config.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/setting_table.h"

namespace weir::config::table_rows {

inline void Assign(const Value& value, std::string* field) {
  *field = std::get<std::string>(value);
}
inline void Assign(const Value& value, int* field) {
  *field = static_cast<int>(std::get<int64_t>(value));
}
inline void Assign(const Value& value, int64_t* field) { *field = std::get<int64_t>(value); }
inline void Assign(const Value& value, bool* field) { *field = std::get<bool>(value); }
inline void Assign(const Value& value, std::chrono::milliseconds* field) {
  *field = std::get<std::chrono::milliseconds>(value);
}
inline void Assign(const Value& value, std::vector<std::string>* field) {
  *field = std::get<std::vector<std::string>>(value);
}
inline void Assign(const Value& value, std::map<std::string, std::string>* field) {
  *field = std::get<std::map<std::string, std::string>>(value);
}
inline void Assign(const Value& value, Assignment* field) {
  *field = std::get<std::string>(value) == "static" ? Assignment::kStatic : Assignment::kGroup;
}
inline void Assign(const Value& value, CatalogKind* field) {
  *field =
      std::get<std::string>(value) == "postgres" ? CatalogKind::kPostgres : CatalogKind::kSqlite;
}

inline void Assign(const Value& value, IcebergDeletes* field) {
  *field = std::get<std::string>(value) == "deletion_vectors" ? IcebergDeletes::kDeletionVectors
                                                              : IcebergDeletes::kEquality;
}

inline Value ToValue(const std::string& field) { return field; }
inline Value ToValue(int field) { return int64_t{field}; }
inline Value ToValue(int64_t field) { return field; }
inline Value ToValue(bool field) { return field; }
inline Value ToValue(std::chrono::milliseconds field) { return field; }
inline Value ToValue(const std::vector<std::string>& field) { return field; }
inline Value ToValue(const std::map<std::string, std::string>& field) { return field; }
inline Value ToValue(Assignment field) { return std::string(ToString(field)); }
inline Value ToValue(CatalogKind field) { return std::string(ToString(field)); }
inline Value ToValue(IcebergDeletes field) { return std::string(ToString(field)); }

// Binds a table entry to its field. Non-capturing lambdas, so the table holds plain pointers.
#define WEIR_PROCESS_FIELD(field)                                                \
  .set_process = [](IngestSettings& s, const Value& v) { Assign(v, &s.field); }, \
  .get_process = [](const IngestSettings& s) { return ToValue(s.field); }
#define WEIR_DATASET_FIELD(field)                                                 \
  .set_dataset = [](DatasetSettings& d, const Value& v) { Assign(v, &d.field); }, \
  .get_dataset = [](const DatasetSettings& d) { return ToValue(d.field); }
#define WEIR_SERVE_FIELD(field)                                               \
  .set_serve = [](ServeSettings& s, const Value& v) { Assign(v, &s.field); }, \
  .get_serve = [](const ServeSettings& s) { return ToValue(s.field); }
// A setting both commands read, bound to the field of the same name in each.
#define WEIR_SHARED_FIELD(field) WEIR_PROCESS_FIELD(field), WEIR_SERVE_FIELD(field)

inline constexpr int64_t kMiB = 1LL << 20;
inline constexpr int64_t kGiB = 1LL << 30;
inline constexpr int64_t kDayMs = 24 * 3600 * 1000LL;

// The rows of `weir serve`'s own settings (setting_table_serve.cc), in the table's order.
std::vector<Setting> ServeRows();
// The rows of the record filters and the dynamic allowlist (setting_table_filters.cc).
std::vector<Setting> FilterRows();
// The rows of a dataset's metadata columns and routing (setting_table_route.cc).
std::vector<Setting> MetadataAndRouteRows();
// The rows of WAL mode (setting_table_wal.cc).
std::vector<Setting> WalRows();
// The rows of `weir maintain`'s policies and --serve (setting_table_maintain.cc).
std::vector<Setting> MaintainRows();
// The rows of upsert datasets (setting_table_upsert.cc).
std::vector<Setting> UpsertRows();

}  // namespace weir::config::table_rows
