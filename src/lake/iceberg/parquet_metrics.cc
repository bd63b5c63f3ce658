#include "lake/iceberg/parquet_metrics.h"

#include <cmath>

#include <parquet/exception.h>
#include <parquet/file_reader.h>
#include <parquet/schema.h>
#include <parquet/statistics.h>

#include "lake/iceberg/binary_value.h"

namespace weir::lake::iceberg {
namespace {

// UTF-8 code points of a string (invalid bytes taken one by one).
std::vector<uint32_t> CodePoints(const std::string& s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<uint8_t>(s[i]);
    int n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xe ? 3 : (b >> 3) == 0x1e ? 4 : 1;
    if (i + n > s.size()) n = 1;
    uint32_t cp = n == 1 ? b : (n == 2 ? b & 0x1f : n == 3 ? b & 0x0f : b & 0x07);
    for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<uint8_t>(s[i + k]) & 0x3f);
    out.push_back(cp);
    i += n;
  }
  return out;
}

std::string Utf8(const std::vector<uint32_t>& cps) {
  std::string out;
  for (const uint32_t cp : cps) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  return out;
}

Int128 SignExtended(const std::string& big_endian) {
  if (big_endian.empty()) return 0;
  auto u = static_cast<UInt128>((static_cast<uint8_t>(big_endian[0]) & 0x80) ? -1 : 0);
  for (const char c : big_endian) u = (u << 8) | static_cast<uint8_t>(c);
  return static_cast<Int128>(u);
}

// A statistics value (min or max) as an Iceberg value of `type`; monostate when the
// combination of Parquet and Iceberg types is one weir does not convert.
Value StatValue(const parquet::Statistics& stats, bool min, const Type& type) {
  const parquet::ColumnDescriptor& column = *stats.descr();
  const auto& logical = column.logical_type();
  switch (stats.physical_type()) {
    case parquet::Type::BOOLEAN: {
      const auto& s = static_cast<const parquet::BoolStatistics&>(stats);
      if (type.id == TypeId::kBoolean) return Value(min ? s.min() : s.max());
      break;
    }
    case parquet::Type::INT32: {
      const auto& s = static_cast<const parquet::Int32Statistics&>(stats);
      const int32_t v = min ? s.min() : s.max();
      if (type.id == TypeId::kInt || type.id == TypeId::kDate) return Value(v);
      if (type.id == TypeId::kLong) return Value(static_cast<int64_t>(v));
      if (type.id == TypeId::kDecimal) return Value(DecimalValue{v});
      break;
    }
    case parquet::Type::INT64: {
      const auto& s = static_cast<const parquet::Int64Statistics&>(stats);
      int64_t v = min ? s.min() : s.max();
      if (type.id == TypeId::kTimestamp || type.id == TypeId::kTimestampTz ||
          type.id == TypeId::kTime) {
        auto unit = parquet::LogicalType::TimeUnit::MICROS;
        if (logical && logical->is_timestamp()) {
          unit = static_cast<const parquet::TimestampLogicalType&>(*logical).time_unit();
        } else if (logical && logical->is_time()) {
          unit = static_cast<const parquet::TimeLogicalType&>(*logical).time_unit();
        }
        if (unit == parquet::LogicalType::TimeUnit::MILLIS) return Value(v * 1000);
        if (unit != parquet::LogicalType::TimeUnit::MICROS) break;  // nanos: no bound
        return Value(v);
      }
      if (type.id == TypeId::kLong) return Value(v);
      if (type.id == TypeId::kDecimal) return Value(DecimalValue{v});
      break;
    }
    case parquet::Type::FLOAT: {
      const auto& s = static_cast<const parquet::FloatStatistics&>(stats);
      const float v = min ? s.min() : s.max();
      if (std::isnan(v)) break;
      if (type.id == TypeId::kFloat) return Value(v);
      if (type.id == TypeId::kDouble) return Value(static_cast<double>(v));
      break;
    }
    case parquet::Type::DOUBLE: {
      const auto& s = static_cast<const parquet::DoubleStatistics&>(stats);
      const double v = min ? s.min() : s.max();
      if (std::isnan(v)) break;
      if (type.id == TypeId::kDouble) return Value(v);
      break;
    }
    case parquet::Type::BYTE_ARRAY: {
      const auto& s = static_cast<const parquet::ByteArrayStatistics&>(stats);
      std::string v = parquet::ByteArrayToString(min ? s.min() : s.max());
      if (type.id == TypeId::kString || type.id == TypeId::kBinary) return Value(std::move(v));
      if (type.id == TypeId::kDecimal) return Value(DecimalValue{SignExtended(v)});
      break;
    }
    case parquet::Type::FIXED_LEN_BYTE_ARRAY: {
      const auto& s = static_cast<const parquet::FLBAStatistics&>(stats);
      const parquet::FLBA flba = min ? s.min() : s.max();
      std::string v(reinterpret_cast<const char*>(flba.ptr),
                    static_cast<size_t>(column.type_length()));
      if (type.id == TypeId::kFixed || type.id == TypeId::kBinary) return Value(std::move(v));
      if (type.id == TypeId::kDecimal) return Value(DecimalValue{SignExtended(v)});
      if (type.id == TypeId::kUuid && v.size() == 16) {
        UuidBytes u;
        std::copy(v.begin(), v.end(), u.begin());
        return Value(u);
      }
      break;
    }
    default:
      break;
  }
  return Value();
}

struct ColumnFold {
  const NestedField* field = nullptr;
  int64_t size = 0;
  int64_t values = 0;
  int64_t nulls = 0;
  bool nulls_known = true;
  bool bounds_known = true;
  Value lower, upper;
};

}  // namespace

std::optional<std::string> TruncateUpperString(const std::string& value, int length) {
  std::vector<uint32_t> cps = CodePoints(value);
  if (static_cast<int>(cps.size()) <= length) return value;
  cps.resize(static_cast<size_t>(length));
  while (!cps.empty()) {
    uint32_t next = cps.back() + 1;
    if (next >= 0xd800 && next <= 0xdfff) next = 0xe000;  // surrogates are not code points
    if (next <= 0x10ffff) {
      cps.back() = next;
      return Utf8(cps);
    }
    cps.pop_back();
  }
  return std::nullopt;
}

std::optional<std::string> TruncateUpperBinary(const std::string& value, int length) {
  if (static_cast<int>(value.size()) <= length) return value;
  std::string out = value.substr(0, static_cast<size_t>(length));
  while (!out.empty()) {
    if (static_cast<uint8_t>(out.back()) != 0xff) {
      out.back() = static_cast<char>(static_cast<uint8_t>(out.back()) + 1);
      return out;
    }
    out.pop_back();
  }
  return std::nullopt;
}

Status AddParquetMetrics(const parquet::FileMetaData& footer, const Schema& schema,
                         const MetricsOptions& options, DataFile& file) {
  const parquet::SchemaDescriptor& parquet_schema = *footer.schema();
  std::vector<ColumnFold> folds(static_cast<size_t>(parquet_schema.num_columns()));
  for (int c = 0; c < parquet_schema.num_columns(); ++c) {
    const parquet::ColumnDescriptor& column = *parquet_schema.Column(c);
    // A variant's leaves (metadata, value, typed_value...) carry no field ids, as the spec
    // requires; the group does. No metrics are kept for a variant (they are optional).
    if (const parquet::schema::Node* root = parquet_schema.GetColumnRoot(c);
        root->is_group() && root->field_id() >= 0) {
      const NestedField* field = schema.FindField(root->field_id());
      if (field != nullptr && field->type.id == TypeId::kVariant) continue;
    }
    const int id = column.schema_node()->field_id();
    if (id < 0) {
      return Status::Invalid("Parquet column ", column.path()->ToDotString(),
                             " has no field id; Iceberg readers map columns by id");
    }
    folds[c].field = schema.FindField(id);
    if (folds[c].field == nullptr) {
      return Status::Invalid("Parquet column ", column.path()->ToDotString(), " has field id ", id,
                             ", which schema ", schema.schema_id(), " lacks");
    }
  }
  file.record_count = footer.num_rows();
  file.split_offsets.clear();
  for (int g = 0; g < footer.num_row_groups(); ++g) {
    const auto group = footer.RowGroup(g);
    int64_t start = INT64_MAX;
    for (int c = 0; c < group->num_columns(); ++c) {
      const auto chunk = group->ColumnChunk(c);
      const int64_t offset = chunk->has_dictionary_page() ? chunk->dictionary_page_offset()
                                                          : chunk->data_page_offset();
      start = std::min(start, offset);
      if (folds[c].field == nullptr) continue;  // a variant's leaf
      ColumnFold& fold = folds[c];
      fold.size += chunk->total_compressed_size();
      fold.values += chunk->num_values();
      const auto stats = chunk->statistics();
      if (stats == nullptr || !chunk->is_stats_set()) {
        fold.nulls_known = fold.bounds_known = false;
        continue;
      }
      if (stats->HasNullCount()) {
        fold.nulls += stats->null_count();
      } else {
        fold.nulls_known = false;
      }
      if (!stats->HasMinMax()) {
        // A row group of nulls only has no min/max; anything else leaves the bounds unknown.
        if (!(stats->HasNullCount() && stats->null_count() == chunk->num_values())) {
          fold.bounds_known = false;
        }
        continue;
      }
      const Value lo = StatValue(*stats, true, fold.field->type);
      const Value hi = StatValue(*stats, false, fold.field->type);
      if (IsNull(lo) || IsNull(hi)) {
        fold.bounds_known = false;
        continue;
      }
      if (IsNull(fold.lower) || Compare(lo, fold.lower) < 0) fold.lower = lo;
      if (IsNull(fold.upper) || Compare(fold.upper, hi) < 0) fold.upper = hi;
    }
    if (start != INT64_MAX) file.split_offsets.push_back(start);
  }
  std::sort(file.split_offsets.begin(), file.split_offsets.end());
  for (const ColumnFold& fold : folds) {
    if (fold.field == nullptr) continue;
    const int id = fold.field->id;
    const Type& type = fold.field->type;
    file.column_sizes[id] = fold.size;
    file.value_counts[id] = fold.values;
    if (fold.nulls_known) file.null_value_counts[id] = fold.nulls;
    if (options.values_never_nan && (type.id == TypeId::kFloat || type.id == TypeId::kDouble)) {
      file.nan_value_counts[id] = 0;
    }
    if (!fold.bounds_known || IsNull(fold.lower)) continue;
    Value lower = fold.lower;
    std::optional<Value> upper = fold.upper;
    const auto length = options.truncate_length;
    if (type.id == TypeId::kString) {
      const std::vector<uint32_t> cps = CodePoints(std::get<std::string>(lower));
      if (static_cast<int>(cps.size()) > length) {
        lower = Utf8(std::vector<uint32_t>(cps.begin(), cps.begin() + length));
      }
      const auto up = TruncateUpperString(std::get<std::string>(fold.upper), length);
      upper = up ? std::optional<Value>(*up) : std::nullopt;
    } else if (type.id == TypeId::kBinary) {
      const std::string& lo = std::get<std::string>(lower);
      if (static_cast<int>(lo.size()) > length) lower = lo.substr(0, static_cast<size_t>(length));
      const auto up = TruncateUpperBinary(std::get<std::string>(fold.upper), length);
      upper = up ? std::optional<Value>(*up) : std::nullopt;
    }
    WEIR_ASSIGN_OR_RAISE(file.lower_bounds[id], ToBinary(lower, type));
    if (upper) {
      WEIR_ASSIGN_OR_RAISE(file.upper_bounds[id], ToBinary(*upper, type));
    }
  }
  return Status::OK();
}

Result<std::shared_ptr<parquet::FileMetaData>> ReadParquetFooter(arrow::fs::FileSystem& fs,
                                                                 const std::string& path) {
  WEIR_ASSIGN_OR_RAISE(auto input, fs.OpenInputFile(path));
  try {
    return parquet::ReadMetaData(input);
  } catch (const parquet::ParquetException& e) {
    return Status::IOError("the Parquet footer of ", path, ": ", e.what());
  }
}

}  // namespace weir::lake::iceberg
