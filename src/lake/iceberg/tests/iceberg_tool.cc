// A test tool: Iceberg tables and transforms made by weir's code alone, for the end-to-end
// tests that read them back with pyiceberg and DuckDB (tests/e2e/test_iceberg_format.py).
//
//   iceberg_tool transform <type> <transform>   JSON values on stdin → JSON results on stdout
//   iceberg_tool write-table <location> <partition fields> <rows.jsonl> [--final-metadata-only]
//
// write-table's rows are JSON objects {"commit": n, "id": long, "name": string, "ts": micros,
// "amount": double, "flag": bool, "extra": string (optional)}; each commit becomes one
// snapshot (one Parquet file per partition tuple), and a column "extra" is added to the
// schema at the first commit that has it. Partition fields are "day(ts),bucket[16](id),...".
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <random>

#include <arrow/builder.h>
#include <arrow/filesystem/localfs.h>
#include <arrow/filesystem/s3fs.h>
#include <nlohmann/json.hpp>

#include "files/object_store.h"
#include "files/parquet_file_writer.h"
#include "lake/iceberg/parquet_metrics.h"
#include "lake/iceberg/snapshot_builder.h"

namespace weir::lake::iceberg {
namespace {

std::string Hex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    out += kDigits[static_cast<uint8_t>(c) >> 4];
    out += kDigits[static_cast<uint8_t>(c) & 15];
  }
  return out;
}

Result<std::string> Unhex(const std::string& text) {
  if (text.size() % 2 != 0) return Status::Invalid("odd hex length");
  std::string out;
  for (size_t i = 0; i < text.size(); i += 2) {
    out += static_cast<char>(std::stoi(text.substr(i, 2), nullptr, 16));
  }
  return out;
}

Int128 ParseInt128(const std::string& text) {
  Int128 v = 0;
  const bool negative = !text.empty() && text[0] == '-';
  for (size_t i = negative ? 1 : 0; i < text.size(); ++i) v = v * 10 + (text[i] - '0');
  return negative ? -v : v;
}

std::string Int128Text(Int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  std::string out;
  while (v != 0) {
    const int digit = static_cast<int>(v % 10);
    out.insert(out.begin(), static_cast<char>('0' + (negative ? -digit : digit)));
    v /= 10;
  }
  return negative ? "-" + out : out;
}

Result<Value> ValueFromJson(const nlohmann::json& j, const Type& type) {
  if (j.is_null()) return Value();
  switch (type.id) {
    case TypeId::kInt:
    case TypeId::kDate:
      return Value(j.get<int32_t>());
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      return Value(j.get<int64_t>());
    case TypeId::kString:
      return Value(j.get<std::string>());
    case TypeId::kBinary:
    case TypeId::kFixed: {
      WEIR_ASSIGN_OR_RAISE(std::string bytes, Unhex(j.get<std::string>()));
      return Value(std::move(bytes));
    }
    case TypeId::kUuid: {
      WEIR_ASSIGN_OR_RAISE(const std::string bytes, Unhex(j.get<std::string>()));
      UuidBytes u{};
      std::copy(bytes.begin(), bytes.end(), u.begin());
      return Value(u);
    }
    case TypeId::kDecimal:
      return Value(DecimalValue{ParseInt128(j.get<std::string>())});
    default:
      return Status::Invalid("type ", ToString(type), " is not supported by the tool");
  }
}

nlohmann::json ValueToJson(const Value& v, const Type& type) {
  if (IsNull(v)) return nullptr;
  switch (type.id) {
    case TypeId::kInt:
    case TypeId::kDate:
      return std::get<int32_t>(v);
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      return std::get<int64_t>(v);
    case TypeId::kString:
      return std::get<std::string>(v);
    case TypeId::kDecimal:
      return Int128Text(std::get<DecimalValue>(v).unscaled);
    case TypeId::kUuid: {
      const UuidBytes& u = std::get<UuidBytes>(v);
      return Hex(std::string(u.begin(), u.end()));
    }
    default:
      return Hex(std::get<std::string>(v));
  }
}

Status RunTransform(const std::string& type_text, const std::string& transform_text) {
  WEIR_ASSIGN_OR_RAISE(const Type type, ParsePrimitiveType(type_text));
  WEIR_ASSIGN_OR_RAISE(const Transform transform, Transform::Parse(transform_text));
  WEIR_ASSIGN_OR_RAISE(const Type result_type, transform.ResultType(type));
  std::string line;
  while (std::getline(std::cin, line)) {
    const auto j = nlohmann::json::parse(line);
    WEIR_ASSIGN_OR_RAISE(const Value v, ValueFromJson(j, type));
    WEIR_ASSIGN_OR_RAISE(const Value out, transform.Apply(type, v));
    std::cout << ValueToJson(out, result_type).dump() << "\n";
  }
  return Status::OK();
}

// "day(ts)" → (source column, transform text, partition field name as Java names it).
Result<PartitionField> ParseField(const std::string& text, const Schema& schema) {
  const auto open = text.find('('), close = text.rfind(')');
  if (open == std::string::npos || close != text.size() - 1) {
    return Status::Invalid("partition field \"", text, "\" is not transform(column)");
  }
  const std::string column = text.substr(open + 1, close - open - 1);
  WEIR_ASSIGN_OR_RAISE(const Transform transform, Transform::Parse(text.substr(0, open)));
  const NestedField* source = schema.FindTopLevel(column);
  if (source == nullptr) return Status::Invalid("no column ", column);
  static const std::map<TransformKind, std::string> kSuffix = {
      {TransformKind::kYear, "_year"},     {TransformKind::kMonth, "_month"},
      {TransformKind::kDay, "_day"},       {TransformKind::kHour, "_hour"},
      {TransformKind::kBucket, "_bucket"}, {TransformKind::kTruncate, "_trunc"},
      {TransformKind::kIdentity, ""},      {TransformKind::kVoid, "_null"}};
  return PartitionField{source->id, 0, column + kSuffix.at(transform.kind), transform};
}

Value RowValue(const nlohmann::json& row, const NestedField& field) {
  const auto it = row.find(field.name);
  if (it == row.end() || it->is_null()) return Value();
  switch (field.type.id) {
    case TypeId::kLong:
    case TypeId::kTimestampTz:
      return Value(it->get<int64_t>());
    case TypeId::kString:
      return Value(it->get<std::string>());
    case TypeId::kDouble:
      return Value(it->get<double>());
    case TypeId::kBoolean:
      return Value(it->get<bool>());
    default:
      return Value();
  }
}

Result<std::shared_ptr<arrow::RecordBatch>> Batch(const Schema& schema,
                                                  const std::vector<nlohmann::json>& rows) {
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<std::shared_ptr<arrow::Array>> columns;
  std::vector<int> ids;
  for (const NestedField& field : schema.fields()) {
    std::shared_ptr<arrow::Array> array;
    std::shared_ptr<arrow::DataType> type;
    const auto build = [&](auto& builder, auto append) -> Status {
      for (const auto& row : rows) {
        const Value v = RowValue(row, field);
        if (IsNull(v)) {
          WEIR_RETURN_NOT_OK(builder.AppendNull());
        } else {
          WEIR_RETURN_NOT_OK(append(builder, v));
        }
      }
      return builder.Finish(&array);
    };
    switch (field.type.id) {
      case TypeId::kLong: {
        arrow::Int64Builder b;
        WEIR_RETURN_NOT_OK(
            build(b, [](auto& x, const Value& v) { return x.Append(std::get<int64_t>(v)); }));
        type = arrow::int64();
        break;
      }
      case TypeId::kTimestampTz: {
        type = arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
        arrow::TimestampBuilder b(type, arrow::default_memory_pool());
        WEIR_RETURN_NOT_OK(
            build(b, [](auto& x, const Value& v) { return x.Append(std::get<int64_t>(v)); }));
        break;
      }
      case TypeId::kString: {
        arrow::StringBuilder b;
        WEIR_RETURN_NOT_OK(
            build(b, [](auto& x, const Value& v) { return x.Append(std::get<std::string>(v)); }));
        type = arrow::utf8();
        break;
      }
      case TypeId::kDouble: {
        arrow::DoubleBuilder b;
        WEIR_RETURN_NOT_OK(
            build(b, [](auto& x, const Value& v) { return x.Append(std::get<double>(v)); }));
        type = arrow::float64();
        break;
      }
      case TypeId::kBoolean: {
        arrow::BooleanBuilder b;
        WEIR_RETURN_NOT_OK(
            build(b, [](auto& x, const Value& v) { return x.Append(std::get<bool>(v)); }));
        type = arrow::boolean();
        break;
      }
      default:
        return Status::Invalid("column type not supported by the tool");
    }
    fields.push_back(arrow::field(field.name, type, !field.required));
    columns.push_back(array);
    ids.push_back(field.id);
  }
  WEIR_ASSIGN_OR_RAISE(auto with_ids, files::WithFieldIds(*arrow::schema(fields), ids));
  return arrow::RecordBatch::Make(with_ids, static_cast<int64_t>(rows.size()), columns);
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

Result<TableIo> OpenIo(const std::string& location) {
  if (!location.starts_with("s3://"))
    return TableIo{std::make_shared<arrow::fs::LocalFileSystem>()};
  files::S3Settings s3;
  s3.endpoint = Env("WEIR_TEST_S3_ENDPOINT");
  s3.access_key_id = Env("WEIR_TEST_S3_ACCESS_KEY");
  s3.secret_access_key = Env("WEIR_TEST_S3_SECRET_KEY");
  s3.region = Env("WEIR_TEST_S3_REGION");
  s3.use_ssl = false;
  s3.path_style = true;
  WEIR_ASSIGN_OR_RAISE(const files::ObjectStore store, files::ObjectStore::Open(location, s3));
  return TableIo{store.filesystem()};
}

Status RunWriteTable(const std::string& location, const std::string& spec_text,
                     const std::string& rows_path, bool final_metadata_only) {
  WEIR_ASSIGN_OR_RAISE(const TableIo io, OpenIo(location));
  std::mt19937_64 random(12345);
  NewTable table;
  table.location = location;
  table.schema = Schema(0, {NestedField{1, "id", false, Type::Primitive(TypeId::kLong), {}},
                            NestedField{2, "name", false, Type::Primitive(TypeId::kString), {}},
                            NestedField{3, "ts", false, Type::Primitive(TypeId::kTimestampTz), {}},
                            NestedField{4, "amount", false, Type::Primitive(TypeId::kDouble), {}},
                            NestedField{5, "flag", false, Type::Primitive(TypeId::kBoolean), {}}});
  size_t start = 0;
  while (start < spec_text.size()) {
    size_t end = spec_text.find(',', start);
    if (end == std::string::npos) end = spec_text.size();
    WEIR_ASSIGN_OR_RAISE(PartitionField field,
                         ParseField(spec_text.substr(start, end - start), table.schema));
    table.partition_fields.push_back(std::move(field));
    start = end + 1;
  }
  table.table_uuid = RandomUuid(random);
  table.now_ms = 1'700'000'000'000;
  WEIR_ASSIGN_OR_RAISE(TableMetadata metadata, TableMetadata::Create(table));
  int version = 1;
  std::string previous = VersionedMetadataUri(metadata, version);
  WEIR_RETURN_NOT_OK(WriteMetadataFile(io, previous, metadata));

  std::map<int64_t, std::vector<nlohmann::json>> commits;
  std::ifstream in(rows_path);
  std::string line;
  while (std::getline(in, line)) {
    const auto row = nlohmann::json::parse(line);
    commits[row.at("commit").get<int64_t>()].push_back(row);
  }
  int64_t offset = 0;
  for (const auto& [commit, rows] : commits) {
    const int64_t now = 1'700'000'000'000 + commit;
    bool has_extra = false;
    for (const auto& row : rows) has_extra |= row.contains("extra");
    if (has_extra && metadata.current_schema().FindTopLevel("extra") == nullptr) {
      int last = metadata.last_column_id();
      WEIR_ASSIGN_OR_RAISE(Schema next,
                           EvolveSchema(metadata.current_schema(),
                                        {{"extra", Type::Primitive(TypeId::kString)}}, {}, last));
      WEIR_ASSIGN_OR_RAISE(const int id, metadata.AddSchema(std::move(next), now));
      WEIR_RETURN_NOT_OK(metadata.SetCurrentSchema(id, now));
    }
    const Schema& schema = metadata.current_schema();
    const PartitionSpec& spec = metadata.default_spec();
    std::map<std::string, std::pair<std::vector<Value>, std::vector<nlohmann::json>>> groups;
    for (const auto& row : rows) {
      std::vector<Value> sources;
      for (const PartitionField& field : spec.fields) {
        sources.push_back(RowValue(row, *schema.FindField(field.source_id)));
      }
      WEIR_ASSIGN_OR_RAISE(std::vector<Value> tuple, PartitionTuple(spec, schema, sources));
      WEIR_ASSIGN_OR_RAISE(const std::string path, PartitionPath(spec, schema, tuple));
      auto& group = groups[path];
      group.first = std::move(tuple);
      group.second.push_back(row);
    }
    AppendRequest request;
    for (const auto& [path, group] : groups) {
      const std::string file =
          location + "/data/" + (path.empty() ? "" : path + "/") + RandomUuid(random) + ".parquet";
      WEIR_ASSIGN_OR_RAISE(auto batch, Batch(schema, group.second));
      WEIR_ASSIGN_OR_RAISE(const std::string fs_path, io.PathOf(file));
      WEIR_ASSIGN_OR_RAISE(auto writer,
                           files::ParquetFileWriter::Create(io.fs, fs_path, batch->schema(), {}));
      WEIR_RETURN_NOT_OK(writer->Append(*batch));
      WEIR_ASSIGN_OR_RAISE(const files::FileInfo info, writer->Finish());
      WEIR_ASSIGN_OR_RAISE(const auto footer, ReadParquetFooter(*io.fs, fs_path));
      DataFile data;
      data.file_path = file;
      data.partition = group.first;
      data.file_size_in_bytes = info.size_bytes;
      WEIR_RETURN_NOT_OK(AddParquetMetrics(*footer, schema, {16, true}, data));
      request.files.push_back(std::move(data));
    }
    offset += static_cast<int64_t>(rows.size());
    request.commit_id = "commit-" + std::to_string(commit);
    request.ledger = {{"events", {{0, offset}}}};
    request.now_ms = now;
    WEIR_ASSIGN_OR_RAISE(PendingSnapshot next, BuildAppend(io, metadata, request, random));
    metadata = std::move(next.metadata);
    WEIR_RETURN_NOT_OK(metadata.RecordPreviousMetadata(previous, now).status());
    previous = VersionedMetadataUri(metadata, ++version);
    // Each version holds every snapshot: 1,000 versions of a 1,000-snapshot table would be
    // hundreds of MB, so long runs may write only the last one.
    if (!final_metadata_only || commit == commits.rbegin()->first) {
      WEIR_RETURN_NOT_OK(WriteMetadataFile(io, previous, metadata));
    }
  }
  WEIR_RETURN_NOT_OK(WriteVersionHint(io, metadata, version));
  std::cout << nlohmann::json({{"metadata", previous}, {"version", version}}).dump() << "\n";
  return Status::OK();
}

}  // namespace
}  // namespace weir::lake::iceberg

int main(int argc, char** argv) {
  using namespace weir::lake::iceberg;
  const std::vector<std::string> args(argv + 1, argv + argc);
  weir::Status status = weir::Status::Invalid(
      "usage: iceberg_tool transform <type> <transform> | write-table <location> <fields> "
      "<rows.jsonl>");
  if (args.size() == 3 && args[0] == "transform") status = RunTransform(args[1], args[2]);
  if ((args.size() == 4 || (args.size() == 5 && args[4] == "--final-metadata-only")) &&
      args[0] == "write-table") {
    status = RunWriteTable(args[1], args[2], args[3], args.size() == 5);
  }
  (void)arrow::fs::EnsureS3Finalized();
  if (!status.ok()) {
    std::cerr << status.ToString() << "\n";
    return 1;
  }
  return 0;
}
