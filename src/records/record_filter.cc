#include "records/record_filter.h"

#include <algorithm>
#include <limits>
#include <mutex>

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <arrow/extension_type.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/check.h"
#include "decode/field_names.h"
#include "records/typed_text.h"

namespace weir::records {
namespace {

enum class ColumnClass { kInteger, kText, kUuid, kOther };

const arrow::DataType& StorageType(const arrow::DataType& type) {
  if (type.id() == arrow::Type::EXTENSION) {
    return *static_cast<const arrow::ExtensionType&>(type).storage_type();
  }
  return type;
}

ColumnClass ClassOf(const arrow::DataType& type) {
  const arrow::DataType& storage = StorageType(type);
  if (arrow::is_integer(storage.id())) return ColumnClass::kInteger;
  if (storage.id() == arrow::Type::STRING || storage.id() == arrow::Type::LARGE_STRING) {
    return ColumnClass::kText;
  }
  if (storage.id() == arrow::Type::FIXED_SIZE_BINARY &&
      static_cast<const arrow::FixedSizeBinaryType&>(storage).byte_width() == 16) {
    return ColumnClass::kUuid;
  }
  return ColumnClass::kOther;
}

// The range of values an integer column holds (as a safe cast of the value array checks it).
std::pair<int64_t, uint64_t> IntegerRange(const arrow::DataType& type) {
  switch (StorageType(type).id()) {
    case arrow::Type::INT8:
      return {INT8_MIN, INT8_MAX};
    case arrow::Type::INT16:
      return {INT16_MIN, INT16_MAX};
    case arrow::Type::INT32:
      return {INT32_MIN, INT32_MAX};
    case arrow::Type::UINT8:
      return {0, UINT8_MAX};
    case arrow::Type::UINT16:
      return {0, UINT16_MAX};
    case arrow::Type::UINT32:
      return {0, UINT32_MAX};
    case arrow::Type::UINT64:
      return {0, UINT64_MAX};
    default:
      return {INT64_MIN, INT64_MAX};
  }
}

// A set made comparable with one column's values.
struct Comparison {
  std::string problem;  // non-empty: the set cannot meet the column
  std::set<int64_t> integers;
  std::set<std::string> texts;
  std::set<UuidBytes> uuids;
  int64_t invalid = 0;  // values left out (not UUIDs)
  std::string first_invalid;
};

// Strict decimal text of an int64 ("-12"), as Arrow's string → integer cast reads it.
std::optional<int64_t> DecimalText(std::string_view text) {
  if (text.empty()) return std::nullopt;
  bool out_of_range = false;
  if (text.find('_') != std::string_view::npos) return std::nullopt;
  return ParseIntegerToken(text, &out_of_range);
}

Comparison Prepare(const FilterValues& values, const arrow::DataType& type) {
  Comparison c;
  switch (ClassOf(type)) {
    case ColumnClass::kInteger: {
      const auto [low, high] = IntegerRange(type);
      auto add = [&](int64_t v) {
        if (v < low || (v >= 0 && static_cast<uint64_t>(v) > high)) {
          c.problem = fmt::format("value {} does not fit the column's type {}", v, type.ToString());
          return;
        }
        c.integers.insert(v);
      };
      if (values.kind == FilterValueKind::kInteger) {
        for (const int64_t v : values.integers) add(v);
      } else {
        for (const std::string& text : values.texts) {
          const auto v = DecimalText(text);
          if (!v) {
            c.problem = fmt::format("value \"{}\" is not an integer like the column", text);
            break;
          }
          add(*v);
        }
      }
      break;
    }
    case ColumnClass::kText:
      for (const std::string& label : values.Labels()) c.texts.insert(label);
      break;
    case ColumnClass::kUuid:
      for (const std::string& label : values.Labels()) {
        // Integers never read as UUIDs (millpond refuses all-decimal static values).
        const auto bytes =
            values.kind == FilterValueKind::kText ? ParseUuidText(label) : std::nullopt;
        if (bytes) {
          c.uuids.insert(*bytes);
        } else {
          if (c.invalid++ == 0) c.first_invalid = label;
        }
      }
      break;
    case ColumnClass::kOther:
      c.problem = fmt::format("its type {} cannot be filtered (integer, text and uuid columns can)",
                              type.ToString());
      break;
  }
  return c;
}

enum class RowVerdict { kNull, kIn, kOut };

// Per-row lookup of one spelling's values in a comparison.
class Matcher {
 public:
  Matcher(const arrow::Array& array, const Comparison& comparison)
      : comparison_(comparison),
        array_(array.type_id() == arrow::Type::EXTENSION
                   ? *static_cast<const arrow::ExtensionArray&>(array).storage()
                   : array),
        kind_(ClassOf(*array.type())) {}

  bool IsNull(int64_t row) const { return array_.IsNull(row); }

  RowVerdict Check(int64_t row, std::string* label) const {
    if (array_.IsNull(row)) return RowVerdict::kNull;
    switch (kind_) {
      case ColumnClass::kInteger: {
        const int64_t v = IntegerAt(row);
        if (!comparison_.integers.count(v)) return RowVerdict::kOut;
        if (label) *label = std::to_string(v);
        return RowVerdict::kIn;
      }
      case ColumnClass::kText: {
        const std::string_view v =
            array_.type_id() == arrow::Type::STRING
                ? static_cast<const arrow::StringArray&>(array_).GetView(row)
                : static_cast<const arrow::LargeStringArray&>(array_).GetView(row);
        const auto found = comparison_.texts.find(std::string(v));
        if (found == comparison_.texts.end()) return RowVerdict::kOut;
        if (label) *label = *found;
        return RowVerdict::kIn;
      }
      case ColumnClass::kUuid: {
        UuidBytes bytes;
        std::copy_n(static_cast<const arrow::FixedSizeBinaryArray&>(array_).GetValue(row), 16,
                    bytes.begin());
        if (!comparison_.uuids.count(bytes)) return RowVerdict::kOut;
        if (label) *label = UuidText(bytes);
        return RowVerdict::kIn;
      }
      case ColumnClass::kOther:
        break;
    }
    return RowVerdict::kOut;
  }

 private:
  int64_t IntegerAt(int64_t row) const {
    switch (array_.type_id()) {
      case arrow::Type::INT8:
        return static_cast<const arrow::Int8Array&>(array_).Value(row);
      case arrow::Type::INT16:
        return static_cast<const arrow::Int16Array&>(array_).Value(row);
      case arrow::Type::INT32:
        return static_cast<const arrow::Int32Array&>(array_).Value(row);
      case arrow::Type::UINT8:
        return static_cast<const arrow::UInt8Array&>(array_).Value(row);
      case arrow::Type::UINT16:
        return static_cast<const arrow::UInt16Array&>(array_).Value(row);
      case arrow::Type::UINT32:
        return static_cast<const arrow::UInt32Array&>(array_).Value(row);
      case arrow::Type::UINT64: {
        const uint64_t v = static_cast<const arrow::UInt64Array&>(array_).Value(row);
        // Beyond int64 no value of a set can equal it.
        return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MIN : static_cast<int64_t>(v);
      }
      default:
        return static_cast<const arrow::Int64Array&>(array_).Value(row);
    }
  }

  const Comparison& comparison_;
  const arrow::Array& array_;
  ColumnClass kind_;
};

// The columns of `batch` spelling `field` (case-insensitively).
std::vector<int> Spellings(const arrow::RecordBatch& batch, const std::string& field) {
  std::vector<int> out;
  for (int i = 0; i < batch.num_columns(); ++i) {
    if (decode::SameColumnName(batch.schema()->field(i)->name(), field)) out.push_back(i);
  }
  return out;
}

// One filter direction over the rows still kept (`keep`), prepared against every spelling.
struct Evaluation {
  std::vector<Comparison> comparisons;  // per spelling
  std::vector<Matcher> matchers;
  std::string problem;  // the first spelling's reason the set cannot be applied
  bool all_invalid = false;
  int64_t invalid = 0;
  std::string first_invalid;
};

void Evaluate(const arrow::RecordBatch& batch, const std::vector<int>& spellings,
              const FilterValues& values, Evaluation* e) {
  e->comparisons.reserve(spellings.size());
  for (const int column : spellings) {
    e->comparisons.push_back(Prepare(values, *batch.column(column)->type()));
    const Comparison& c = e->comparisons.back();
    if (!c.problem.empty() && e->problem.empty()) {
      e->problem =
          fmt::format("column \"{}\": {}", batch.schema()->field(column)->name(), c.problem);
    }
    if (c.invalid > e->invalid) {
      e->invalid = c.invalid;
      e->first_invalid = c.first_invalid;
    }
    if (ClassOf(*batch.column(column)->type()) == ColumnClass::kUuid && c.uuids.empty()) {
      e->all_invalid = true;
    }
  }
  for (size_t s = 0; s < spellings.size(); ++s) {
    e->matchers.emplace_back(*batch.column(spellings[s]), e->comparisons[s]);
  }
}

// The verdict of the first spelling holding a value in `row`.
RowVerdict Verdict(const Evaluation& e, int64_t row, std::string* label) {
  for (const Matcher& matcher : e.matchers) {
    if (!matcher.IsNull(row)) return matcher.Check(row, label);
  }
  return RowVerdict::kNull;
}

}  // namespace

Result<std::shared_ptr<RecordFilter>> RecordFilter::Make(FilterConfig config) {
  if (!config.keep_field.empty() && config.keep_values == nullptr) {
    return Status::Invalid("the allowlist on ", config.keep_field, " has no values");
  }
  if (!config.drop_field.empty() && config.drop_values.empty()) {
    return Status::Invalid("the denylist on ", config.drop_field, " has no values");
  }
  return std::shared_ptr<RecordFilter>(new RecordFilter(std::move(config)));
}

void RecordFilter::WarnOnce(const std::string& key, const std::string& text) const {
  {
    std::lock_guard lock(warned_mutex_);
    if (!warned_.insert(key).second) return;
  }
  spdlog::warn("{} (warned once per field and cause)", text);
}

Result<std::shared_ptr<arrow::RecordBatch>> RecordFilter::Apply(
    const std::shared_ptr<arrow::RecordBatch>& batch, FilterOutcome* outcome) const {
  const int64_t rows = batch->num_rows();
  if (rows == 0 || (!keeps() && !drops())) return batch;
  std::vector<uint8_t> keep(static_cast<size_t>(rows), 1);
  int64_t kept = rows;
  auto skip_all = [&](const char* reason) {
    outcome->skipped[reason] += kept;
    std::fill(keep.begin(), keep.end(), 0);
    kept = 0;
  };

  if (keeps()) {
    const auto values = config_.keep_values->Current();
    const std::string& field = config_.keep_field;
    const auto spellings = Spellings(*batch, field);
    Evaluation e;
    if (spellings.empty()) {
      skip_all(kFilterFieldMissing);
    } else {
      Evaluate(*batch, spellings, *values, &e);
      if (e.invalid > 0) {
        ++outcome->invalid_values;
        WarnOnce(fmt::format("keep/{}/invalid/{}/{}", field, values->size(), e.first_invalid),
                 fmt::format("allowlist on {}: {} of its {} value(s) are not UUIDs and are left "
                             "out of the comparison, e.g. \"{}\"",
                             field, e.invalid, values->size(), e.first_invalid));
      }
      if (!e.problem.empty()) {
        WarnOnce("keep/" + field + "/" + e.problem,
                 fmt::format("allowlist on {}: {}; its records are skipped as {}", field, e.problem,
                             kFilterFieldMissing));
        skip_all(kFilterFieldMissing);
      } else if (e.all_invalid) {
        skip_all(kFilterValueInvalid);
      } else {
        std::string label;
        for (int64_t row = 0; row < rows; ++row) {
          const RowVerdict verdict = Verdict(e, row, &label);
          if (verdict == RowVerdict::kIn) {
            ++outcome->matched[label];
            continue;
          }
          keep[static_cast<size_t>(row)] = 0;
          --kept;
          ++outcome->skipped[verdict == RowVerdict::kNull ? kFilterFieldMissing : kFilterExcluded];
        }
      }
    }
  }

  if (drops() && kept > 0) {
    const std::string& field = config_.drop_field;
    const auto spellings = Spellings(*batch, field);
    if (spellings.empty()) {
      WarnOnce("drop/" + field + "/missing",
               fmt::format("denylist on {}: no such column in a flush; its records are kept "
                           "(the denylist fails open)",
                           field));
    } else {
      Evaluation e;
      Evaluate(*batch, spellings, config_.drop_values, &e);
      if (e.invalid > 0) {
        ++outcome->invalid_values;
        WarnOnce(fmt::format("drop/{}/invalid/{}/{}", field, config_.drop_values.size(),
                             e.first_invalid),
                 fmt::format("denylist on {}: {} of its {} value(s) are not UUIDs and are left "
                             "out of the comparison, e.g. \"{}\"",
                             field, e.invalid, config_.drop_values.size(), e.first_invalid));
      }
      if (!e.problem.empty()) {
        WarnOnce("drop/" + field + "/" + e.problem,
                 fmt::format("denylist on {}: {}; its records are kept (the denylist fails open)",
                             field, e.problem));
      } else if (!e.all_invalid) {
        for (int64_t row = 0; row < rows; ++row) {
          if (!keep[static_cast<size_t>(row)]) continue;
          if (Verdict(e, row, nullptr) != RowVerdict::kIn) continue;
          keep[static_cast<size_t>(row)] = 0;
          --kept;
          ++outcome->skipped[kFilterDropped];
        }
      }
    }
  }

  if (kept == rows) return batch;
  static std::once_flag compute_ready;
  std::call_once(compute_ready, [] {
    // Registers libarrow_compute's kernels (filter); fails only when broken.
    WEIR_CHECK(arrow::compute::Initialize().ok());
  });
  arrow::BooleanBuilder mask;
  WEIR_RETURN_NOT_OK(mask.Reserve(rows));
  for (const uint8_t k : keep) mask.UnsafeAppend(k != 0);
  std::shared_ptr<arrow::Array> mask_array;
  WEIR_RETURN_NOT_OK(mask.Finish(&mask_array));
  WEIR_ASSIGN_OR_RAISE(auto filtered, arrow::compute::Filter(batch, mask_array));
  return filtered.record_batch();
}

}  // namespace weir::records
