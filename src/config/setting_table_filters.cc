// The rows of the record filters and the dynamic allowlist (datasets[].filter.*,
// datasets[].include_values.*), in their own block of the table.
#include "config/setting_rows.h"

namespace weir::config::table_rows {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
std::vector<Setting> FilterRows() {
  using S = SettingType;
  constexpr Scope kD = Scope::kDataset;
  return {
      {.name = "filter.keep_field",
       .scope = kD,
       .type = S::kString,
       .millpond_env = "MILLPOND_FILTER_KEEP_FIELD_NAME",
       .description =
           "Allowlist: the column (an output column of the mapping, if any; matched "
           "case-insensitively) whose value must be in filter.keep_values for a record to be "
           "written. Integer, text or uuid columns; it runs after typed_columns. It fails "
           "closed: records it cannot evaluate are skipped as `filter_field_missing` (no such "
           "column in the flush, a null, a column of another type, values that cannot meet "
           "the column's type) or `filter_value_invalid` (a uuid column and no value is a "
           "UUID); the others not in the set as `filter_excluded` "
           "(`weir_records_filtered_total`); kept ones are counted per value "
           "(`weir_filter_matched_total`). Skipped records are accounted in the offset "
           "ledger, never replayed. Set together with filter.keep_values.",
       WEIR_DATASET_FIELD(filter.keep_field)},
      {.name = "filter.keep_values",
       .scope = kD,
       .type = S::kStringList,
       .millpond_env = "MILLPOND_FILTER_VALUES",
       .description =
           "The allowlist's values, comma separated: integers when every one is an integer "
           "(Python's int(): sign, digits, `_` between digits), text otherwise. On a uuid "
           "column (typed_columns `<field>:uuid`) every value must be a UUID, written so it is "
           "not all digits (the canonical hyphenated form). With include_values.url, the "
           "static pins.",
       WEIR_DATASET_FIELD(filter.keep_values)},
      {.name = "filter.drop_field",
       .scope = kD,
       .type = S::kString,
       .millpond_env = "MILLPOND_FILTER_DROP_FIELD_NAME",
       .description =
           "Denylist: records whose value in this column is in filter.drop_values are skipped "
           "(`filter_dropped`), after the allowlist (keep ∩ ¬drop). It fails open: a missing "
           "column, a column of another type or values that cannot meet it keep the flush as "
           "it is (with a warning), and nulls are kept. Set together with "
           "filter.drop_values.",
       WEIR_DATASET_FIELD(filter.drop_field)},
      {.name = "filter.drop_values",
       .scope = kD,
       .type = S::kStringList,
       .millpond_env = "MILLPOND_FILTER_DROP_VALUES",
       .description = "The denylist's values; the same detection and uuid rule as "
                      "filter.keep_values (its own list, never shared with it).",
       WEIR_DATASET_FIELD(filter.drop_values)},
      {.name = "include_values.url",
       .scope = kD,
       .type = S::kString,
       .millpond_env = "MILLPOND_INCLUDE_VALUES_URL",
       .description =
           "An http(s) URL answering a JSON array of the allowlist's values, polled on a "
           "thread of its own. Needs the allowlist (filter.keep_field and keep_values). "
           "Redirects are refused; a body over include_values.max_bytes, a non-200 answer, a "
           "timeout or a body that is not an array of scalars is a failed poll, which keeps "
           "the last good set.",
       WEIR_DATASET_FIELD(include_values.url)},
      {.name = "include_values.mode",
       .scope = kD,
       .type = S::kString,
       .millpond_env = "MILLPOND_INCLUDE_VALUES_MODE",
       .default_note = "`shadow`",
       .description =
           "`shadow` or `authoritative` (any case). `shadow`: the static values stay in force; the "
           "endpoint is only observed (the "
           "`weir_include_values_shadow_only_*` gauges). `authoritative`: the polled set ∪ "
           "the static pins is in force; startup waits for the first good poll. Additions "
           "apply at once; a value leaves after include_values.removal_polls consecutive good "
           "polls without it (pins never leave); a poll that is empty (while endpoint values "
           "are held), would remove more than half of the endpoint's values at once "
           "(its additions still apply) or flips integers ↔ text is refused "
           "(`weir_include_values_refused_total`). Only with include_values.url.",
       WEIR_DATASET_FIELD(include_values.mode)},
      {.name = "include_values.poll_interval",
       .scope = kD,
       .type = S::kDuration,
       .min = 100,
       .max = 86400000,
       .millpond_env = "MILLPOND_INCLUDE_VALUES_POLL_INTERVAL_S",
       .description = "Time between polls, jittered ±10 % (millpond's variable in seconds).",
       WEIR_DATASET_FIELD(include_values.poll_interval)},
      {.name = "include_values.removal_polls",
       .scope = kD,
       .type = S::kInt,
       .min = 1,
       .max = 100000,
       .millpond_env = "MILLPOND_INCLUDE_VALUES_REMOVAL_POLLS",
       .description = "Consecutive good polls a value must be absent from before it is "
                      "removed; failed and refused polls advance nothing. 1 turns damping off "
                      "(warned at startup).",
       WEIR_DATASET_FIELD(include_values.removal_polls)},
      {.name = "include_values.request_timeout",
       .scope = kD,
       .type = S::kDuration,
       .min = 100,
       .max = 600000,
       .millpond_env = "MILLPOND_INCLUDE_VALUES_REQUEST_TIMEOUT_S",
       .description = "Deadline of one poll, connect to last byte (millpond's variable in "
                      "seconds).",
       WEIR_DATASET_FIELD(include_values.request_timeout)},
      {.name = "include_values.startup_timeout",
       .scope = kD,
       .type = S::kDuration,
       .min = 100,
       .max = 3600000,
       .millpond_env = "MILLPOND_INCLUDE_VALUES_STARTUP_TIMEOUT_S",
       .description = "Authoritative mode: how long startup waits for the first good poll "
                      "before it fails (millpond's variable in seconds).",
       WEIR_DATASET_FIELD(include_values.startup_timeout)},
      {.name = "include_values.auth_header_name",
       .scope = kD,
       .type = S::kString,
       .millpond_env = "MILLPOND_INCLUDE_VALUES_AUTH_HEADER_NAME",
       .description = "A header sent with each poll (an HTTP token); set together with "
                      "include_values.auth_token. Only with include_values.url.",
       WEIR_DATASET_FIELD(include_values.auth_header_name)},
      {.name = "include_values.auth_token",
       .scope = kD,
       .type = S::kString,
       .millpond_env = "MILLPOND_INCLUDE_VALUES_AUTH_TOKEN",
       .secrecy = Secrecy::kSecret,
       .description = "That header's value. Never printed.",
       WEIR_DATASET_FIELD(include_values.auth_token)},
      {.name = "include_values.max_bytes",
       .scope = kD,
       .type = S::kBytes,
       .min = 64,
       .max = 256 * kMiB,
       .description = "Largest response body read from the endpoint; a larger one fails the "
                      "poll (and is never read whole).",
       WEIR_DATASET_FIELD(include_values.max_bytes)},
  };
}
#pragma GCC diagnostic pop

}  // namespace weir::config::table_rows
