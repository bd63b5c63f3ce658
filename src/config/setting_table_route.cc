// The settings table's rows of a dataset's Kafka metadata columns and routing (issue 14):
// see setting_table.cc for the rest. Their own file so that other record stages' rows merge
// without touching these.
#include "config/setting_rows.h"

namespace weir::config::table_rows {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
std::vector<Setting> MetadataAndRouteRows() {
  using S = SettingType;
  constexpr Scope kD = Scope::kDataset;
  return {
      {.name = "metadata_columns",
       .scope = kD,
       .type = S::kStringList,
       .description =
           "Kafka metadata written with each row, `column:source` with source `topic` "
           "(varchar), `partition`, `offset` (bigint), `timestamp` (timestamptz; null when the "
           "record has none), `key` (varchar; null for a null key) or `header.<name>` (varchar: "
           "the last header of that exact name, null when absent), e.g. "
           "`kafka_offset:offset,trace_id:header.trace-id`. A key or header that is not UTF-8 "
           "is nulled (`weir_values_nulled_total{reason=\"invalid_utf8\"}`). A name that is "
           "also a typed or mapping column stops startup; a payload field of the same name is "
           "dropped and counted (`weir_fields_dropped_total{reason=\"metadata_column\"}`).",
       WEIR_DATASET_FIELD(metadata_columns)},
      {.name = "route.template",
       .scope = kD,
       .type = S::kString,
       .description =
           "Routing: each row goes to the table this template names from one of its fields, "
           "e.g. `events_{event}` (one `{field}`, a top-level field or mapping column; a "
           "string value, or an integer in decimal; the name lower-cased, an identifier of at "
           "most 63 bytes). Rows whose value is missing or null, renders no valid name, is "
           "not in `route.allow`, names a table weir writes otherwise, or would create a table "
           "beyond `route.max_tables` go to the dataset's `table`, counted by reason "
           "(`weir_route_fallback_total`). Every table carries its own offset ledger; unset: "
           "no routing.",
       WEIR_DATASET_FIELD(route.template_text)},
      {.name = "route.allow",
       .scope = kD,
       .type = S::kStringList,
       .description = "Routing: the only table names rows may be routed to (identifiers, "
                      "compared lower-cased); empty: any valid name.",
       WEIR_DATASET_FIELD(route.allow)},
      {.name = "route.max_tables",
       .scope = kD,
       .type = S::kInt,
       .min = 1,
       .max = 10000,
       .description =
           "Routing: a writer creates a routed table only while it has fewer than this many "
           "routed tables open; rows for a further new name go to the dataset's `table` "
           "(`reason=\"over_cap\"`). A routed table that exists is always written to, so a "
           "replay never moves a record to another table. Must be at least the size of "
           "`route.allow`.",
       WEIR_DATASET_FIELD(route.max_tables)},
  };
}
#pragma GCC diagnostic pop

}  // namespace weir::config::table_rows
