// An upsert commit's deletes on a format 3 table as deletion vectors (docs/ARCHITECTURE.md,
// "Upsert datasets"; upsert.iceberg_deletes: deletion_vectors): the live data files that may
// hold a flushed key (same partition tuple, key bounds that admit a flushed value) are read
// back by their key columns, and each file with rows of those keys gets one deletion vector of
// their positions, merged with the file's current vector (which the snapshot replaces). All
// vectors of a commit are blobs of one Puffin file. Planned on each attempt's table state, so a
// retry after a conflict plans again on the table that moved.
#include <algorithm>
#include <unordered_set>

#include <arrow/array/concatenate.h>
#include <arrow/array/util.h>
#include <fmt/format.h>
#include <parquet/arrow/reader.h>

#include "files/parquet_file_writer.h"
#include "lake/iceberg/avro_file.h"
#include "lake/iceberg/binary_value.h"
#include "lake/iceberg/deletion_vector.h"
#include "lake/iceberg/iceberg_table.h"
#include "lake/iceberg/puffin.h"
#include "lake/row_keys.h"

namespace weir::lake::iceberg {
namespace {

// The sorted distinct flushed values of one key column of type int, long or string, as its
// bounds compare (Appendix D bytes decoded).
struct PruneColumn {
  int field_id = 0;
  Type type;
  std::vector<int64_t> ints;
  std::vector<std::string> texts;
  bool has_null = false;
};

bool MayHold(const PruneColumn& c, const DataFile& f) {
  const auto nulls = f.null_value_counts.find(c.field_id);
  if (c.has_null && (nulls == f.null_value_counts.end() || nulls->second > 0)) return true;
  if (c.ints.empty() && c.texts.empty()) return false;  // only nulls wanted, the file has none
  const auto lower = f.lower_bounds.find(c.field_id);
  const auto upper = f.upper_bounds.find(c.field_id);
  if (lower == f.lower_bounds.end() || upper == f.upper_bounds.end()) return true;
  auto lo = FromBinary(lower->second, c.type);
  auto hi = FromBinary(upper->second, c.type);
  if (!lo.ok() || !hi.ok()) return true;
  if (c.type.id == TypeId::kString) {
    const auto* l = std::get_if<std::string>(&*lo);
    const auto* h = std::get_if<std::string>(&*hi);
    if (l == nullptr || h == nullptr) return true;
    const auto it = std::lower_bound(c.texts.begin(), c.texts.end(), *l);
    return it != c.texts.end() && *it <= *h;  // a truncated upper bound is still above
  }
  const auto as_long = [](const Value& v) -> std::optional<int64_t> {
    if (const auto* i = std::get_if<int32_t>(&v)) return *i;
    if (const auto* l = std::get_if<int64_t>(&v)) return *l;
    return std::nullopt;
  };
  const auto l = as_long(*lo), h = as_long(*hi);
  if (!l || !h) return true;
  const auto it = std::lower_bound(c.ints.begin(), c.ints.end(), *l);
  return it != c.ints.end() && *it <= *h;
}

// The key columns of a data file (by field id; a column the file lacks is null in every row).
Result<std::vector<std::shared_ptr<arrow::Array>>> ReadKeyColumns(arrow::fs::FileSystem& fs,
                                                                  const std::string& path,
                                                                  const std::vector<int>& ids) {
  WEIR_ASSIGN_OR_RAISE(auto input, fs.OpenInputFile(path));
  WEIR_ASSIGN_OR_RAISE(auto reader, parquet::arrow::OpenFile(input, arrow::default_memory_pool()));
  std::shared_ptr<arrow::Schema> schema;
  WEIR_RETURN_NOT_OK(reader->GetSchema(&schema));
  const int64_t rows = reader->parquet_reader()->metadata()->num_rows();
  std::vector<std::shared_ptr<arrow::Array>> out;
  for (const int id : ids) {
    int field = -1;
    for (int f = 0; f < schema->num_fields(); ++f) {
      if (files::FieldIdOf(*schema->field(f)) == id) field = f;
    }
    if (field < 0) {
      WEIR_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(arrow::null(), rows));
      out.push_back(nulls);
      continue;
    }
    std::shared_ptr<arrow::ChunkedArray> chunks;
    WEIR_RETURN_NOT_OK(reader->ReadColumn(field, &chunks));
    if (chunks->num_chunks() == 0) {
      WEIR_ASSIGN_OR_RAISE(auto empty, arrow::MakeArrayOfNull(chunks->type(), 0));
      out.push_back(empty);
      continue;
    }
    WEIR_ASSIGN_OR_RAISE(auto array, arrow::Concatenate(chunks->chunks()));
    out.push_back(array);
  }
  return out;
}

// The vector whose blob lies at [offset, offset + length) of the Puffin file `path` (fs).
Result<DeletionVector> ReadBlob(arrow::fs::FileSystem& fs, const std::string& path, int64_t offset,
                                int64_t length) {
  WEIR_ASSIGN_OR_RAISE(auto input, fs.OpenInputFile(path));
  WEIR_ASSIGN_OR_RAISE(auto blob, input->ReadAt(offset, length));
  auto decoded = DeletionVector::DecodeBlob(blob->ToString());
  if (!decoded.ok()) return WithContext(decoded.status(), "deletion vector in " + path);
  return decoded;
}

Result<DeletionVector> ReadVectorOf(const TableIo& io, const DataFile& dv) {
  if (!dv.content_offset || !dv.content_size_in_bytes) {
    return Status::Invalid("deletion vector ", dv.file_path, " has no content offset or size");
  }
  WEIR_ASSIGN_OR_RAISE(const std::string path, io.PathOf(dv.file_path));
  return ReadBlob(*io.fs, path, *dv.content_offset, *dv.content_size_in_bytes);
}

}  // namespace

Result<IcebergTable::DvPlan> IcebergTable::PlanDeletionVectors(
    const KeyDeletes& deletes, const std::vector<ManifestFile>& manifests,
    std::vector<std::string>& paths) {
  DvPlan plan;
  const TableMetadata& base = current_.metadata;
  const Schema& schema = base.current_schema();
  const arrow::RecordBatch& keys = *deletes.keys;
  if (keys.num_rows() == 0 || manifests.empty()) return plan;
  if (keys.num_columns() != static_cast<int>(deletes.columns.size())) {
    return Status::Invalid("the key deletes of ", name_, " have ", keys.num_columns(),
                           " columns for ", deletes.columns.size(), " key columns");
  }
  std::vector<int> ids;
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<std::shared_ptr<arrow::Array>> key_arrays;
  std::vector<PruneColumn> prune;
  for (size_t k = 0; k < deletes.columns.size(); ++k) {
    const NestedField* field = schema.FindTopLevel(deletes.columns[k]);
    if (field == nullptr || keys.column(static_cast<int>(k))->type_id() == arrow::Type::NA) {
      return ClassifiedError(
          ErrorClass::kFatal, "iceberg", "upsert_key_missing",
          fmt::format("upsert key column \"{}\" is not a column of {}", deletes.columns[k], name_));
    }
    ids.push_back(field->id);
    key_arrays.push_back(keys.column(static_cast<int>(k)));
    fields.push_back(arrow::field(deletes.columns[k], key_arrays.back()->type()));
    const TypeId type = field->type.id;
    if (type != TypeId::kInt && type != TypeId::kLong && type != TypeId::kString) continue;
    WEIR_ASSIGN_OR_RAISE(auto canonical, CanonicalKeyColumn(key_arrays.back()));
    PruneColumn p{field->id, field->type, {}, {}, false};
    bool usable = true;
    for (int64_t r = 0; r < canonical->length() && usable; ++r) {
      if (canonical->IsNull(r)) {
        p.has_null = true;
      } else if (type != TypeId::kString && canonical->type_id() == arrow::Type::INT64) {
        p.ints.push_back(static_cast<const arrow::Int64Array&>(*canonical).Value(r));
      } else if (type == TypeId::kString && canonical->type_id() == arrow::Type::LARGE_BINARY) {
        p.texts.emplace_back(static_cast<const arrow::LargeBinaryArray&>(*canonical).GetView(r));
      } else {
        usable = false;  // values of another kind than the column's: no pruning by it
      }
    }
    if (!usable) continue;
    std::sort(p.ints.begin(), p.ints.end());
    p.ints.erase(std::unique(p.ints.begin(), p.ints.end()), p.ints.end());
    std::sort(p.texts.begin(), p.texts.end());
    p.texts.erase(std::unique(p.texts.begin(), p.texts.end()), p.texts.end());
    prune.push_back(std::move(p));
  }
  WEIR_ASSIGN_OR_RAISE(const auto encoded, EncodeRowKeys(key_arrays));
  const std::unordered_set<std::string> wanted(encoded.begin(), encoded.end());
  // Every partition source column is a key column (validated at startup): the flushed keys'
  // partition tuples are the only ones whose files can hold them.
  const auto key_rows =
      arrow::RecordBatch::Make(arrow::schema(fields), keys.num_rows(), key_arrays);
  WEIR_ASSIGN_OR_RAISE(const std::vector<PartitionGroup> groups, Partition(*key_rows));
  std::vector<std::vector<Value>> tuples;
  for (const auto& group : groups) {
    WEIR_ASSIGN_OR_RAISE(auto tuple, PartitionTupleOf(group.values));
    tuples.push_back(std::move(tuple));
  }

  // The live data files holding rows of the keys, and those rows' positions.
  struct Hit {
    DataFile file;
    DeletionVector positions;
  };
  std::vector<Hit> hits;
  for (const ManifestFile& manifest : manifests) {
    if (manifest.content != ManifestContent::kData) continue;
    const PartitionSpec* spec = base.SpecById(manifest.partition_spec_id);
    if (spec == nullptr) {
      return Status::Invalid("manifest ", manifest.manifest_path, " names partition spec ",
                             manifest.partition_spec_id, ", which the table lacks");
    }
    const bool current_spec = manifest.partition_spec_id == base.default_spec_id();
    WEIR_ASSIGN_OR_RAISE(const auto type, PartitionType(*spec, schema));
    WEIR_ASSIGN_OR_RAISE(std::vector<ManifestEntry> entries, ReadManifest(io_, manifest, type));
    for (ManifestEntry& e : entries) {
      if (e.status == EntryStatus::kDeleted) continue;
      const DataFile& f = e.data_file;
      if (current_spec && std::find(tuples.begin(), tuples.end(), f.partition) == tuples.end()) {
        continue;
      }
      if (std::any_of(prune.begin(), prune.end(),
                      [&](const PruneColumn& p) { return !MayHold(p, f); })) {
        continue;
      }
      ++plan.files_read;
      WEIR_ASSIGN_OR_RAISE(const std::string path, io_.PathOf(f.file_path));
      auto columns = ReadKeyColumns(*io_.fs, path, ids);
      if (!columns.ok()) return WithContext(columns.status(), "reading the keys of " + path);
      WEIR_ASSIGN_OR_RAISE(const auto file_keys, EncodeRowKeys(*columns));
      Hit hit{f, DeletionVector()};
      for (size_t r = 0; r < file_keys.size(); ++r) {
        if (wanted.contains(file_keys[r])) hit.positions.Add(static_cast<int64_t>(r));
      }
      if (hit.positions.Cardinality() == 0) continue;
      if (!current_spec) {
        return ClassifiedError(
            ErrorClass::kFatal, "iceberg", "dv_old_spec",
            fmt::format("{}: rows of upserted keys are in {}, a file of an older partition spec; "
                        "deletion vectors are written for files of the current spec only",
                        name_, f.file_path));
      }
      hits.push_back(std::move(hit));
    }
  }
  if (hits.empty()) return plan;

  // The data files' current vectors (merged into the new ones, which replace them). A Parquet
  // position delete file of such a data file would have to be merged too: weir writes none.
  std::map<std::string, std::pair<std::string, DataFile>> current;  // data file → (manifest, DV)
  for (const ManifestFile& manifest : manifests) {
    if (manifest.content != ManifestContent::kDeletes) continue;
    const PartitionSpec* spec = base.SpecById(manifest.partition_spec_id);
    if (spec == nullptr) continue;  // applies to no file of the current spec
    WEIR_ASSIGN_OR_RAISE(const auto type, PartitionType(*spec, schema));
    WEIR_ASSIGN_OR_RAISE(std::vector<ManifestEntry> entries, ReadManifest(io_, manifest, type));
    for (ManifestEntry& e : entries) {
      if (e.status == EntryStatus::kDeleted) continue;
      if (e.data_file.content != FileContent::kPositionDeletes) continue;
      const auto target = e.data_file.referenced_data_file;
      const bool named = std::any_of(hits.begin(), hits.end(), [&](const Hit& h) {
        return !target || *target == h.file.file_path;
      });
      if (!named) continue;
      if (e.data_file.file_format != "PUFFIN" || !target) {
        return ClassifiedError(
            ErrorClass::kFatal, "iceberg", "dv_position_deletes",
            fmt::format("{}: position delete file {} may apply to a file whose rows an upsert "
                        "deletes; deletion vectors do not merge Parquet position deletes",
                        name_, e.data_file.file_path));
      }
      current[*target] = {manifest.manifest_path, std::move(e.data_file)};
    }
  }

  std::vector<PuffinBlob> blobs;
  for (Hit& hit : hits) {
    const int64_t added = hit.positions.Cardinality();
    if (const auto old = current.find(hit.file.file_path); old != current.end()) {
      WEIR_ASSIGN_OR_RAISE(const DeletionVector previous, ReadVectorOf(io_, old->second.second));
      const int64_t before = previous.Cardinality();
      hit.positions.Merge(previous);
      if (hit.positions.Cardinality() == before) continue;  // every hit was deleted already
      plan.rows += hit.positions.Cardinality() - before;
      plan.replaced[old->second.first].insert(hit.file.file_path);
    } else {
      plan.rows += added;
    }
    blobs.push_back({std::string(kDeletionVectorBlobType),
                     {},
                     -1,
                     -1,
                     {{"referenced-data-file", hit.file.file_path},
                      {"cardinality", std::to_string(hit.positions.Cardinality())}},
                     hit.positions.EncodeBlob()});
  }
  if (blobs.empty()) return plan;
  std::string relative = NewFilePath({});
  if (relative.ends_with(".parquet")) relative = relative.substr(0, relative.size() - 8);
  relative += "-dv.puffin";
  std::vector<PuffinBlobMetadata> placed;
  const std::string bytes = EncodePuffin(blobs, {{"created-by", "weir"}}, placed);
  const std::string path = data_directory_ + relative;
  paths.push_back(path);
  WEIR_RETURN_NOT_OK(WriteWholeFile(*io_.fs, path, bytes));
  size_t b = 0;
  for (const Hit& hit : hits) {
    if (b == placed.size() ||
        placed[b].properties.at("referenced-data-file") != hit.file.file_path) {
      continue;  // no new positions: the file's vector stays
    }
    DataFile dv;
    dv.content = FileContent::kPositionDeletes;
    dv.file_path = data_uri_ + relative;
    dv.file_format = "PUFFIN";
    dv.partition = hit.file.partition;
    dv.record_count = std::stoll(placed[b].properties.at("cardinality"));
    dv.file_size_in_bytes = static_cast<int64_t>(bytes.size());
    dv.referenced_data_file = hit.file.file_path;
    dv.content_offset = placed[b].offset;
    dv.content_size_in_bytes = placed[b].length;
    plan.files.push_back(std::move(dv));
    ++b;
  }
  return plan;
}

Result<std::vector<int64_t>> IcebergTable::ReadDeletionVector(const PositionDeletes& deletes) {
  if (deletes.vector_offset < 0) {
    return Status::Invalid(deletes.path, " is not a deletion vector");
  }
  WEIR_ASSIGN_OR_RAISE(
      const DeletionVector vector,
      ReadBlob(*io_.fs, deletes.path, deletes.vector_offset, deletes.vector_length));
  return vector.Positions();
}

}  // namespace weir::lake::iceberg
