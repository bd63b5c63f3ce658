// The record filters of a dataset (issue 14; millpond's MILLPOND_FILTER_*): an allowlist that
// keeps the records whose value in `keep_field` is in the keep set, then a denylist that drops
// the records whose value in `drop_field` is in the drop set (keep ∩ ¬drop).
//
// Where they run: on each flush's batch after decoding (and the mapping, when the dataset has
// one) and after the typed columns' casts, before the rows are written, as millpond runs them
// after JSON → Arrow and its coercion. So a filter field is an output column (a mapped column's
// name) and a uuid-pinned field holds 16 bytes. A field matches the batch's columns as the
// tables resolve names, case-insensitively (every spelling; a record holds at most one).
//
// Filterable columns are integer, text and uuid columns; anything else (boolean, double,
// timestamp) is refused explicitly, never compared loosely. Values meet a column the way
// millpond casts its value array to the column's type: integers against a text column compare
// as their decimal text; text against an integer column only when every value is an integer,
// otherwise the set cannot be applied; against a uuid column every value must read as a UUID
// (millpond's grammar) — those that do not are left out of the comparison and counted once per
// batch (`invalid_values`) while the rest still apply.
//
// The allowlist fails closed: rows it cannot evaluate are skipped, as `filter_field_missing`
// (no such column in the batch, a null value, an unfilterable column type, a set that cannot
// meet the column) or `filter_value_invalid` (a uuid column and no value of the set is a
// UUID); rows evaluated and not in the set are `filter_excluded`; kept rows are counted per
// matched value. The denylist fails open: a missing field, unfilterable type or incompatible
// set keeps the batch as it is (with a warning, once per field and cause), a null is kept, and
// only rows whose value is in the set are skipped, as `filter_dropped`.
//
// Skipped records are never lost from the ledger: they were consumed, so the flush's offset
// ranges still cover them and the commit advances past them (they are accounted, not replayed).
//
// Threading: Make once; Apply may be called from any thread (the keep set is read through
// KeepValuesSource, which is thread-safe).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <arrow/record_batch.h>

#include "base/status.h"
#include "records/filter_values.h"

namespace weir::records {

// Where the allowlist's current set comes from: the static list, or the include-values poller.
class KeepValuesSource {
 public:
  virtual ~KeepValuesSource() = default;
  // The set in force now; never null. Thread-safe.
  virtual std::shared_ptr<const FilterValues> Current() const = 0;
};

// A set that never changes (the static list).
class StaticKeepValues final : public KeepValuesSource {
 public:
  explicit StaticKeepValues(FilterValues values)
      : values_(std::make_shared<const FilterValues>(std::move(values))) {}
  std::shared_ptr<const FilterValues> Current() const override { return values_; }

 private:
  std::shared_ptr<const FilterValues> values_;
};

struct FilterConfig {
  std::string keep_field;  // empty: no allowlist
  std::shared_ptr<const KeepValuesSource> keep_values;
  std::string drop_field;  // empty: no denylist
  FilterValues drop_values;
};

// The skip reasons (the `reason` label of weir_records_filtered_total).
inline constexpr const char* kFilterFieldMissing = "filter_field_missing";
inline constexpr const char* kFilterExcluded = "filter_excluded";
inline constexpr const char* kFilterValueInvalid = "filter_value_invalid";
inline constexpr const char* kFilterDropped = "filter_dropped";

// What filtering one batch did.
struct FilterOutcome {
  std::map<std::string, int64_t> skipped;  // reason → records
  std::map<std::string, int64_t> matched;  // allowlist value → kept records
  int64_t invalid_values = 0;              // batches with set values left out (not UUIDs)
};

class RecordFilter {
 public:
  // Both fields must be column names; a configured direction needs its set.
  static Result<std::shared_ptr<RecordFilter>> Make(FilterConfig config);

  bool keeps() const { return !config_.keep_field.empty(); }
  bool drops() const { return !config_.drop_field.empty(); }
  const FilterConfig& config() const { return config_; }

  // The rows of `batch` that pass both filters (same schema), and what was skipped why.
  Result<std::shared_ptr<arrow::RecordBatch>> Apply(
      const std::shared_ptr<arrow::RecordBatch>& batch, FilterOutcome* outcome) const;

 private:
  explicit RecordFilter(FilterConfig config) : config_(std::move(config)) {}
  // Logs `text` once per `key` for the life of the filter.
  void WarnOnce(const std::string& key, const std::string& text) const;

  FilterConfig config_;
  mutable std::mutex warned_mutex_;
  mutable std::set<std::string> warned_;  // GUARDED_BY(warned_mutex_)
};

}  // namespace weir::records
