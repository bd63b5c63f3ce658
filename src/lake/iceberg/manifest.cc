#include "lake/iceberg/manifest.h"

#include <cmath>
#include <cstring>

#include "lake/iceberg/avro_file.h"
#include "lake/iceberg/binary_value.h"
#include "lake/iceberg/manifest_avro.h"

namespace weir::lake::iceberg {
namespace {

void EncodeIntLongMap(AvroEncoder& e, const std::map<int, int64_t>& map) {
  if (map.empty()) return e.Branch(0);
  e.Branch(1);
  e.BlockStart(static_cast<int64_t>(map.size()));
  for (const auto& [key, value] : map) {
    e.Int(key);
    e.Long(value);
  }
  e.BlockEnd();
}

void EncodeIntBytesMap(AvroEncoder& e, const std::map<int, std::string>& map) {
  if (map.empty()) return e.Branch(0);
  e.Branch(1);
  e.BlockStart(static_cast<int64_t>(map.size()));
  for (const auto& [key, value] : map) {
    e.Int(key);
    e.Bytes(value);
  }
  e.BlockEnd();
}

template <typename T>
void EncodeList(AvroEncoder& e, const std::vector<T>& list) {
  if (list.empty()) return e.Branch(0);
  e.Branch(1);
  e.BlockStart(static_cast<int64_t>(list.size()));
  for (const T& v : list) e.Long(v);
  e.BlockEnd();
}

void EncodeOptionalLong(AvroEncoder& e, const std::optional<int64_t>& v) {
  if (!v) return e.Branch(0);
  e.Branch(1);
  e.Long(*v);
}

void EncodeOptionalBytes(AvroEncoder& e, const std::optional<std::string>& v) {
  if (!v) return e.Branch(0);
  e.Branch(1);
  e.Bytes(*v);
}

Status EncodeEntry(AvroEncoder& e, const ManifestEntry& entry,
                   const std::vector<NestedField>& partition_type, int format_version) {
  const DataFile& f = entry.data_file;
  if (f.partition.size() != partition_type.size()) {
    return Status::Invalid("data file ", f.file_path, " has ", f.partition.size(),
                           " partition values for ", partition_type.size(), " fields");
  }
  e.Int(static_cast<int32_t>(entry.status));
  EncodeOptionalLong(e, entry.snapshot_id);
  EncodeOptionalLong(e, entry.sequence_number);
  EncodeOptionalLong(e, entry.file_sequence_number);
  e.Int(static_cast<int32_t>(f.content));
  e.String(f.file_path);
  e.String(f.file_format);
  for (size_t i = 0; i < partition_type.size(); ++i) {
    WEIR_RETURN_NOT_OK(EncodeOptionalValue(e, f.partition[i], partition_type[i].type));
  }
  e.Long(f.record_count);
  e.Long(f.file_size_in_bytes);
  EncodeIntLongMap(e, f.column_sizes);
  EncodeIntLongMap(e, f.value_counts);
  EncodeIntLongMap(e, f.null_value_counts);
  EncodeIntLongMap(e, f.nan_value_counts);
  EncodeIntBytesMap(e, f.lower_bounds);
  EncodeIntBytesMap(e, f.upper_bounds);
  EncodeOptionalBytes(e, f.key_metadata);
  EncodeList(e, f.split_offsets);
  EncodeList(e, f.equality_ids);
  if (f.sort_order_id) {
    e.Branch(1);
    e.Int(*f.sort_order_id);
  } else {
    e.Branch(0);
  }
  if (format_version >= 3) EncodeOptionalLong(e, f.first_row_id);
  EncodeOptionalBytes(e, f.referenced_data_file);
  if (format_version >= 3) {
    EncodeOptionalLong(e, f.content_offset);  // deletion vectors only
    EncodeOptionalLong(e, f.content_size_in_bytes);
  }
  return Status::OK();
}

// Keeps the partition summary of one field up to date.
struct SummaryBuilder {
  Type type;
  FieldSummary summary;
  Value lower, upper;

  void Add(const Value& v) {
    if (IsNull(v)) {
      summary.contains_null = true;
      return;
    }
    if (type.id == TypeId::kFloat || type.id == TypeId::kDouble) {
      const double d = std::holds_alternative<float>(v) ? std::get<float>(v) : std::get<double>(v);
      summary.contains_nan = summary.contains_nan.value_or(false) || std::isnan(d);
      if (std::isnan(d)) return;
    }
    if (IsNull(lower) || Compare(v, lower) < 0) lower = v;
    if (IsNull(upper) || Compare(upper, v) < 0) upper = v;
  }

  Result<FieldSummary> Finish() {
    if (type.id == TypeId::kFloat || type.id == TypeId::kDouble) {
      summary.contains_nan = summary.contains_nan.value_or(false);
    }
    if (!IsNull(lower)) {
      WEIR_ASSIGN_OR_RAISE(summary.lower_bound, ToBinary(lower, type));
      WEIR_ASSIGN_OR_RAISE(summary.upper_bound, ToBinary(upper, type));
    }
    return summary;
  }
};

// An Iceberg int-keyed map (an Avro array of key/value records), each value read by `read`.
template <typename V, typename Read>
Result<std::map<int, V>> DecodeIntMap(avro_value_t& record, const char* name, Read read) {
  std::map<int, V> out;
  avro_value_t array;
  WEIR_ASSIGN_OR_RAISE(const bool present, OptionalField(record, name, array));
  if (!present) return out;
  size_t n = 0;
  avro_value_get_size(&array, &n);
  for (size_t i = 0; i < n; ++i) {
    avro_value_t kv;
    avro_value_get_by_index(&array, i, &kv, nullptr);
    WEIR_ASSIGN_OR_RAISE(avro_value_t key, Field(kv, "key"));
    WEIR_ASSIGN_OR_RAISE(avro_value_t value, Field(kv, "value"));
    WEIR_ASSIGN_OR_RAISE(const int32_t k, ReadInt(key));
    WEIR_ASSIGN_OR_RAISE(out[k], read(value));
  }
  return out;
}

Result<std::map<int, int64_t>> DecodeIntLongMap(avro_value_t& record, const char* name) {
  return DecodeIntMap<int64_t>(record, name, [](avro_value_t& v) { return ReadLong(v); });
}

Result<std::map<int, std::string>> DecodeIntBytesMap(avro_value_t& record, const char* name) {
  return DecodeIntMap<std::string>(record, name, [](avro_value_t& v) { return ReadBytes(v); });
}

template <typename T>
Result<std::vector<T>> DecodeList(avro_value_t& record, const char* name) {
  std::vector<T> out;
  avro_value_t array;
  WEIR_ASSIGN_OR_RAISE(const bool present, OptionalField(record, name, array));
  if (!present) return out;
  size_t n = 0;
  avro_value_get_size(&array, &n);
  for (size_t i = 0; i < n; ++i) {
    avro_value_t element;
    avro_value_get_by_index(&array, i, &element, nullptr);
    WEIR_ASSIGN_OR_RAISE(const int64_t v, ReadLong(element));
    out.push_back(static_cast<T>(v));
  }
  return out;
}

Result<std::optional<int64_t>> DecodeOptionalLong(avro_value_t& record, const char* name) {
  avro_value_t value;
  WEIR_ASSIGN_OR_RAISE(const bool present, OptionalField(record, name, value));
  if (!present) return std::optional<int64_t>();
  WEIR_ASSIGN_OR_RAISE(const int64_t v, ReadLong(value));
  return std::optional<int64_t>(v);
}

Result<std::optional<std::string>> DecodeOptionalBytes(avro_value_t& record, const char* name) {
  avro_value_t value;
  WEIR_ASSIGN_OR_RAISE(const bool present, OptionalField(record, name, value));
  if (!present) return std::optional<std::string>();
  WEIR_ASSIGN_OR_RAISE(std::string v, ReadBytes(value));
  return std::optional<std::string>(std::move(v));
}

Result<ManifestEntry> DecodeEntry(avro_value_t& record, const ManifestFile& manifest,
                                  const std::vector<NestedField>& partition_type) {
  ManifestEntry entry;
  WEIR_ASSIGN_OR_RAISE(avro_value_t status, Field(record, "status"));
  WEIR_ASSIGN_OR_RAISE(const int32_t s, ReadInt(status));
  if (s < 0 || s > 2) return Status::Invalid("manifest entry status ", s);
  entry.status = static_cast<EntryStatus>(s);
  WEIR_ASSIGN_OR_RAISE(entry.snapshot_id, DecodeOptionalLong(record, "snapshot_id"));
  WEIR_ASSIGN_OR_RAISE(entry.sequence_number, DecodeOptionalLong(record, "sequence_number"));
  WEIR_ASSIGN_OR_RAISE(entry.file_sequence_number,
                       DecodeOptionalLong(record, "file_sequence_number"));
  // Inheritance (spec: "Sequence Number Inheritance").
  if (!entry.snapshot_id) entry.snapshot_id = manifest.added_snapshot_id;
  if (entry.status == EntryStatus::kAdded) {
    if (!entry.sequence_number) entry.sequence_number = manifest.sequence_number;
    if (!entry.file_sequence_number) entry.file_sequence_number = manifest.sequence_number;
  }
  WEIR_ASSIGN_OR_RAISE(avro_value_t file, Field(record, "data_file"));
  DataFile& f = entry.data_file;
  avro_value_t v;
  WEIR_ASSIGN_OR_RAISE(const bool has_content, OptionalField(file, "content", v));
  if (has_content) {
    WEIR_ASSIGN_OR_RAISE(const int32_t content, ReadInt(v));
    if (content < 0 || content > 2) return Status::Invalid("data file content ", content);
    f.content = static_cast<FileContent>(content);
  }
  WEIR_ASSIGN_OR_RAISE(v, Field(file, "file_path"));
  WEIR_ASSIGN_OR_RAISE(f.file_path, ReadBytes(v));
  WEIR_ASSIGN_OR_RAISE(v, Field(file, "file_format"));
  WEIR_ASSIGN_OR_RAISE(f.file_format, ReadBytes(v));
  // Partition fields are read by position, the spec's order: their Avro names may have been
  // made Avro-compatible by the writer.
  WEIR_ASSIGN_OR_RAISE(avro_value_t partition, Field(file, "partition"));
  size_t partition_fields = 0;
  avro_value_get_size(&partition, &partition_fields);
  if (partition_fields != partition_type.size()) {
    return Status::Invalid("data file ", f.file_path, ": a partition of ", partition_fields,
                           " fields for a spec of ", partition_type.size());
  }
  for (size_t i = 0; i < partition_type.size(); ++i) {
    avro_value_t pv;
    avro_value_get_by_index(&partition, i, &pv, nullptr);
    WEIR_ASSIGN_OR_RAISE(Value value, DecodeValue(pv, partition_type[i].type));
    f.partition.push_back(std::move(value));
  }
  WEIR_ASSIGN_OR_RAISE(v, Field(file, "record_count"));
  WEIR_ASSIGN_OR_RAISE(f.record_count, ReadLong(v));
  WEIR_ASSIGN_OR_RAISE(v, Field(file, "file_size_in_bytes"));
  WEIR_ASSIGN_OR_RAISE(f.file_size_in_bytes, ReadLong(v));
  WEIR_ASSIGN_OR_RAISE(f.column_sizes, DecodeIntLongMap(file, "column_sizes"));
  WEIR_ASSIGN_OR_RAISE(f.value_counts, DecodeIntLongMap(file, "value_counts"));
  WEIR_ASSIGN_OR_RAISE(f.null_value_counts, DecodeIntLongMap(file, "null_value_counts"));
  WEIR_ASSIGN_OR_RAISE(f.nan_value_counts, DecodeIntLongMap(file, "nan_value_counts"));
  WEIR_ASSIGN_OR_RAISE(f.lower_bounds, DecodeIntBytesMap(file, "lower_bounds"));
  WEIR_ASSIGN_OR_RAISE(f.upper_bounds, DecodeIntBytesMap(file, "upper_bounds"));
  WEIR_ASSIGN_OR_RAISE(f.key_metadata, DecodeOptionalBytes(file, "key_metadata"));
  WEIR_ASSIGN_OR_RAISE(f.split_offsets, DecodeList<int64_t>(file, "split_offsets"));
  WEIR_ASSIGN_OR_RAISE(f.equality_ids, DecodeList<int>(file, "equality_ids"));
  WEIR_ASSIGN_OR_RAISE(const auto sort_order, DecodeOptionalLong(file, "sort_order_id"));
  if (sort_order) f.sort_order_id = static_cast<int>(*sort_order);
  WEIR_ASSIGN_OR_RAISE(f.referenced_data_file, DecodeOptionalBytes(file, "referenced_data_file"));
  WEIR_ASSIGN_OR_RAISE(f.first_row_id, DecodeOptionalLong(file, "first_row_id"));
  WEIR_ASSIGN_OR_RAISE(f.content_offset, DecodeOptionalLong(file, "content_offset"));
  WEIR_ASSIGN_OR_RAISE(f.content_size_in_bytes, DecodeOptionalLong(file, "content_size_in_bytes"));
  return entry;
}

}  // namespace

Result<std::string> TableIo::PathOf(const std::string& uri) const {
  // Iceberg locations are used verbatim: a partition path's "%C3%A9" is part of the object's
  // name, so Arrow's PathFromUri, which percent-decodes, must not see them.
  const auto scheme_end = uri.find("://");
  if (scheme_end == std::string::npos) {
    if (uri.starts_with("file:/")) return uri.substr(5);
    return uri;
  }
  const std::string scheme = uri.substr(0, scheme_end);
  const std::string rest = uri.substr(scheme_end + 3);
  if (scheme == "file") return rest;
  if (scheme == "s3" || scheme == "s3a" || scheme == "s3n" || scheme == "gs") return rest;
  if (scheme == "abfs" || scheme == "abfss" || scheme == "wasb" || scheme == "wasbs" ||
      scheme == "az" || scheme == "azure") {
    // container@account.dfs.core.windows.net/path → container/path
    const auto at = rest.find('@');
    const auto slash = rest.find('/');
    if (at != std::string::npos && (slash == std::string::npos || at < slash)) {
      return rest.substr(0, at) + (slash == std::string::npos ? "" : rest.substr(slash));
    }
    return rest;
  }
  return Status::Invalid("location ", uri, ": scheme ", scheme, " is not supported");
}

Result<ManifestFile> WriteManifest(const TableIo& io, const std::string& uri,
                                   const ManifestContext& context,
                                   const std::vector<ManifestEntry>& entries) {
  WEIR_ASSIGN_OR_RAISE(const std::vector<NestedField> partition_type,
                       PartitionType(*context.spec, *context.schema));
  const bool deletes = context.content == ManifestContent::kDeletes;
  AvroContainerWriter writer(ManifestEntryAvroSchema(partition_type, context.format_version).dump(),
                             {{"schema", context.schema->ToJson().dump()},
                              {"schema-id", std::to_string(context.schema->schema_id())},
                              {"partition-spec", context.spec->FieldsJson().dump()},
                              {"partition-spec-id", std::to_string(context.spec->spec_id)},
                              {"format-version", std::to_string(context.format_version)},
                              {"content", deletes ? "deletes" : "data"}});
  ManifestFile manifest;
  manifest.manifest_path = uri;
  manifest.partition_spec_id = context.spec->spec_id;
  manifest.content = context.content;
  manifest.sequence_number = context.sequence_number;
  manifest.min_sequence_number = context.sequence_number;
  manifest.added_snapshot_id = context.snapshot_id;
  std::vector<SummaryBuilder> summaries;
  for (const NestedField& field : partition_type) summaries.push_back({field.type, {}, {}, {}});
  bool first_live = true;
  for (const ManifestEntry& entry : entries) {
    if ((entry.data_file.content != FileContent::kData) != deletes) {
      return Status::Invalid(deletes ? "a data file in a delete manifest"
                                     : "a delete file in a data manifest");
    }
    WEIR_RETURN_NOT_OK(
        EncodeEntry(writer.encoder(), entry, partition_type, context.format_version));
    writer.FinishRecord();
    const int64_t rows = entry.data_file.record_count;
    switch (entry.status) {
      case EntryStatus::kAdded:
        ++manifest.added_files_count;
        manifest.added_rows_count += rows;
        break;
      case EntryStatus::kExisting:
        ++manifest.existing_files_count;
        manifest.existing_rows_count += rows;
        break;
      case EntryStatus::kDeleted:
        ++manifest.deleted_files_count;
        manifest.deleted_rows_count += rows;
        break;
    }
    if (entry.status != EntryStatus::kDeleted) {
      const int64_t seq = entry.sequence_number.value_or(context.sequence_number);
      manifest.min_sequence_number = first_live ? seq : std::min(manifest.min_sequence_number, seq);
      first_live = false;
    }
    for (size_t i = 0; i < summaries.size(); ++i) summaries[i].Add(entry.data_file.partition[i]);
  }
  for (SummaryBuilder& builder : summaries) {
    WEIR_ASSIGN_OR_RAISE(FieldSummary summary, builder.Finish());
    manifest.partitions.push_back(std::move(summary));
  }
  WEIR_ASSIGN_OR_RAISE(const std::string bytes, writer.Finish());
  WEIR_ASSIGN_OR_RAISE(const std::string path, io.PathOf(uri));
  WEIR_RETURN_NOT_OK(WriteWholeFile(*io.fs, path, bytes));
  manifest.manifest_length = static_cast<int64_t>(bytes.size());
  return manifest;
}

Result<std::vector<ManifestEntry>> ReadManifest(const TableIo& io, const ManifestFile& manifest,
                                                const std::vector<NestedField>& partition_type) {
  WEIR_ASSIGN_OR_RAISE(const std::string path, io.PathOf(manifest.manifest_path));
  WEIR_ASSIGN_OR_RAISE(const std::string bytes, ReadWholeFile(*io.fs, path));
  WEIR_ASSIGN_OR_RAISE(auto reader, AvroFileReader::Open(bytes, manifest.manifest_path));
  std::vector<ManifestEntry> entries;
  // First row id inheritance (spec: "First Row ID Inheritance"), as Java's reader does it:
  // live data files without one take the manifest's, advanced by each such file's rows.
  std::optional<int64_t> next_row_id = manifest.first_row_id;
  while (true) {
    WEIR_ASSIGN_OR_RAISE(avro_value_t * record, reader->Next());
    if (record == nullptr) break;
    auto entry = DecodeEntry(*record, manifest, partition_type);
    if (!entry.ok()) return WithContext(entry.status(), "manifest " + manifest.manifest_path);
    DataFile& file = entry->data_file;
    if (!next_row_id) {
      file.first_row_id.reset();  // no row ids before the table's first v3 snapshot
    } else if (entry->status != EntryStatus::kDeleted && file.content == FileContent::kData &&
               !file.first_row_id) {
      file.first_row_id = *next_row_id;
      *next_row_id += file.record_count;
    }
    entries.push_back(std::move(entry).ValueUnsafe());
  }
  return entries;
}

Result<int64_t> WriteManifestList(const TableIo& io, const std::string& uri,
                                  const ManifestListContext& context,
                                  const std::vector<ManifestFile>& manifests) {
  std::vector<std::pair<std::string, std::string>> metadata = {
      {"snapshot-id", std::to_string(context.snapshot_id)},
      {"sequence-number", std::to_string(context.sequence_number)},
      {"format-version", std::to_string(context.format_version)}};
  if (context.format_version >= 3) {
    metadata.emplace_back("first-row-id", std::to_string(context.first_row_id));
  }
  metadata.emplace_back("parent-snapshot-id", context.parent_snapshot_id
                                                  ? std::to_string(*context.parent_snapshot_id)
                                                  : "null");
  AvroContainerWriter writer(ManifestListAvroSchema(context.format_version).dump(),
                             std::move(metadata));
  for (const ManifestFile& m : manifests) {
    EncodeManifestFile(writer.encoder(), m, context.format_version);
    writer.FinishRecord();
  }
  WEIR_ASSIGN_OR_RAISE(const std::string bytes, writer.Finish());
  WEIR_ASSIGN_OR_RAISE(const std::string path, io.PathOf(uri));
  WEIR_RETURN_NOT_OK(WriteWholeFile(*io.fs, path, bytes));
  return static_cast<int64_t>(bytes.size());
}

int64_t AssignFirstRowIds(std::vector<ManifestFile>& manifests, int64_t first_row_id) {
  int64_t next = first_row_id;
  for (ManifestFile& m : manifests) {
    if (m.content != ManifestContent::kData || m.first_row_id) continue;
    m.first_row_id = next;
    next += m.added_rows_count + m.existing_rows_count;
  }
  return next - first_row_id;
}

Result<std::vector<ManifestFile>> ReadManifestList(const TableIo& io, const std::string& uri) {
  WEIR_ASSIGN_OR_RAISE(const std::string path, io.PathOf(uri));
  WEIR_ASSIGN_OR_RAISE(const std::string bytes, ReadWholeFile(*io.fs, path));
  WEIR_ASSIGN_OR_RAISE(auto reader, AvroFileReader::Open(bytes, uri));
  std::vector<ManifestFile> out;
  while (true) {
    WEIR_ASSIGN_OR_RAISE(avro_value_t * record, reader->Next());
    if (record == nullptr) break;
    auto manifest = DecodeManifestFile(*record);
    if (!manifest.ok()) return WithContext(manifest.status(), "manifest list " + uri);
    out.push_back(std::move(manifest).ValueUnsafe());
  }
  return out;
}

}  // namespace weir::lake::iceberg
