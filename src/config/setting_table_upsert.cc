// The settings table's rows of upsert datasets (issue 15): the key columns and where their
// values come from. See setting_table.cc for the rest.
#include "config/setting_rows.h"

namespace weir::config::table_rows {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
std::vector<Setting> UpsertRows() {
  using S = SettingType;
  constexpr Scope kD = Scope::kDataset;
  return {
      {.name = "upsert.key",
       .scope = kD,
       .type = S::kStringList,
       .description =
           "Makes the dataset an upsert of these key columns: the table holds one row per key, "
           "its latest record's. Within a flush the last record of a key (by Kafka offset) wins; "
           "the flush's commit deletes the older rows of its keys and inserts the new ones in "
           "one snapshot, with the offset ledger. A record with a key and a null value (a "
           "tombstone) deletes its key; its key values are read from the message key, a JSON "
           "object. Partition source columns must be key columns. DuckLake (positional delete "
           "files) and Iceberg (equality delete files, or deletion vectors: see "
           "`upsert.iceberg_deletes`); not in ingest.mode wal.",
       WEIR_DATASET_FIELD(upsert.key)},
      {.name = "upsert.key_from",
       .scope = kD,
       .type = S::kEnum,
       .allowed = {"value", "kafka_key"},
       .description =
           "Where the key columns' values come from: `value`, the record's own fields; or "
           "`kafka_key`, the message key, a JSON object whose fields (named in `upsert.key`) "
           "are added to the row and win over fields of the same name in the value.",
       WEIR_DATASET_FIELD(upsert.key_from)},
      {.name = "upsert.iceberg_deletes",
       .scope = kD,
       .type = S::kEnum,
       .allowed = {"equality", "deletion_vectors"},
       .description =
           "How an Iceberg upsert deletes the older rows of its keys. `equality`: one equality "
           "delete file on the key columns per partition tuple and flush (format version 2 or "
           "3; readers match the keys). `deletion_vectors`: the commit finds the rows' "
           "positions (the live files of the keys' partitions whose key column bounds admit "
           "them, read by their key columns) and writes one deletion vector per data file, "
           "merged with the file's current one, as blobs of a Puffin file: Iceberg format "
           "version 3. A table weir creates is then format version 3; an existing table of an "
           "older format version stops startup. Needs `upsert.key` and `lake.format: "
           "iceberg`.",
       WEIR_DATASET_FIELD(upsert.iceberg_deletes)},
  };
}
#pragma GCC diagnostic pop

}  // namespace weir::config::table_rows
