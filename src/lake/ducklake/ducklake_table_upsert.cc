// An upsert commit's deletes (lake/table.h KeyDeletes): the live rows of the flushed keys,
// found through the catalog's per-file column statistics and read back only from the candidate
// files, deleted by positional delete files in the commit's own snapshot
// (docs/ARCHITECTURE.md, "Upsert datasets").
#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <arrow/array/concatenate.h>
#include <arrow/array/util.h>
#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <arrow/table.h>
#include <arrow/util/key_value_metadata.h>
#include <fmt/format.h>
#include <parquet/arrow/reader.h>
#include <spdlog/spdlog.h>

#include "base/number_text.h"
#include "files/object_names.h"
#include "files/parquet_file_writer.h"
#include "lake/ducklake/ducklake_catalog.h"
#include "lake/ducklake/ducklake_table.h"
#include "lake/row_keys.h"

namespace weir::lake::ducklake {
namespace {

// The Iceberg-reserved field ids DuckDB writes on a delete file's columns.
constexpr int kFilePathFieldId = 2147483646;
constexpr int kPosFieldId = 2147483645;

// The sorted distinct values of one key column, in the form its statistics compare with:
// integers for integer columns, bytes for text; nullopt when the column does not prune.
struct PruneColumn {
  int64_t column_id = -1;
  bool integers = false;
  std::vector<int64_t> ints;
  std::vector<std::string> texts;
  bool has_null = false;
};

// Column names compare as the catalog does: ASCII case-insensitively.
bool SameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// Whether a file whose column lies in [min, max] (text statistics; nullopt unknown) may hold
// one of the values.
bool MayHold(const PruneColumn& c, const std::optional<std::string>& min,
             const std::optional<std::string>& max, const std::optional<std::string>& nulls) {
  if (c.has_null && nulls != "0") return true;
  if (c.ints.empty() && c.texts.empty()) return false;  // only nulls wanted, the file has none
  if (!min || !max) return true;
  if (c.integers) {
    const auto lo = ParseInt64Text(*min), hi = ParseInt64Text(*max);
    if (!lo || !hi) return true;
    const auto it = std::lower_bound(c.ints.begin(), c.ints.end(), *lo);
    return it != c.ints.end() && *it <= *hi;
  }
  const auto it = std::lower_bound(c.texts.begin(), c.texts.end(), *min);
  return it != c.texts.end() && *it <= *max;
}

Result<std::unique_ptr<parquet::arrow::FileReader>> OpenParquet(arrow::fs::FileSystem& fs,
                                                                const std::string& path) {
  WEIR_ASSIGN_OR_RAISE(auto input, fs.OpenInputFile(path));
  return parquet::arrow::OpenFile(input, arrow::default_memory_pool());
}

}  // namespace

Result<DuckLakeTable::DeletePlan> DuckLakeTable::PlanKeyDeletes(const KeyDeletes& deletes) {
  DeletePlan plan;
  const auto& keys = *deletes.keys;
  if (keys.num_rows() == 0) return plan;
  // The key columns as the table knows them; one the table lacks is null in every live row.
  std::vector<const Column*> key_columns;
  for (const auto& name : deletes.columns) {
    const auto found = std::find_if(columns_.begin(), columns_.end(),
                                    [&](const Column& c) { return SameName(c.name, name); });
    key_columns.push_back(found == columns_.end() ? nullptr : &*found);
  }
  std::vector<std::shared_ptr<arrow::Array>> key_arrays;
  for (int c = 0; c < keys.num_columns(); ++c) key_arrays.push_back(keys.column(c));
  WEIR_ASSIGN_OR_RAISE(const auto encoded, EncodeRowKeys(key_arrays));
  const std::unordered_set<std::string> wanted(encoded.begin(), encoded.end());

  // The values of each key column the statistics can prune by.
  std::vector<PruneColumn> prune;
  std::string id_list;
  for (size_t k = 0; k < key_columns.size(); ++k) {
    const Column* column = key_columns[k];
    if (column == nullptr) continue;
    const bool integers =
        column->type == ColumnType::kInteger || column->type == ColumnType::kBigint;
    if (!integers && column->type != ColumnType::kVarchar) continue;
    WEIR_ASSIGN_OR_RAISE(auto canonical, CanonicalKeyColumn(key_arrays[k]));
    PruneColumn p;
    p.column_id = column->id;
    p.integers = integers;
    for (int64_t r = 0; r < canonical->length(); ++r) {
      if (canonical->IsNull(r)) {
        p.has_null = true;
      } else if (integers && canonical->type_id() == arrow::Type::INT64) {
        p.ints.push_back(static_cast<const arrow::Int64Array&>(*canonical).Value(r));
      } else if (!integers && canonical->type_id() == arrow::Type::LARGE_BINARY) {
        p.texts.emplace_back(static_cast<const arrow::LargeBinaryArray&>(*canonical).GetView(r));
      } else {
        p.column_id = -1;  // values of another kind than the column's: no pruning by it
        break;
      }
    }
    if (p.column_id < 0) continue;
    std::sort(p.ints.begin(), p.ints.end());
    p.ints.erase(std::unique(p.ints.begin(), p.ints.end()), p.ints.end());
    std::sort(p.texts.begin(), p.texts.end());
    p.texts.erase(std::unique(p.texts.begin(), p.texts.end()), p.texts.end());
    id_list += (id_list.empty() ? "" : ", ") + std::to_string(p.column_id);
    prune.push_back(std::move(p));
  }

  // The live data files, and which of them may hold a flushed key by their statistics.
  WEIR_ASSIGN_OR_RAISE(auto live, db_->Query("SELECT data_file_id, path, path_is_relative, "
                                             "record_count FROM ducklake_data_file WHERE "
                                             "table_id = $1 AND end_snapshot IS NULL",
                                             {table_id_}));
  std::map<int64_t, std::vector<bool>> may_hold;  // file → per prune column
  if (!prune.empty()) {
    WEIR_ASSIGN_OR_RAISE(
        auto stats,
        db_->Query(fmt::format("SELECT s.data_file_id, s.column_id, s.min_value, s.max_value, "
                               "s.null_count FROM ducklake_file_column_stats s JOIN "
                               "ducklake_data_file f ON f.data_file_id = s.data_file_id WHERE "
                               "f.table_id = $1 AND f.end_snapshot IS NULL AND s.column_id IN "
                               "({})",
                               id_list),
                   {table_id_}));
    for (const auto& row : stats) {
      WEIR_ASSIGN_OR_RAISE(const int64_t file, ToInt(row[0], "data_file_id"));
      WEIR_ASSIGN_OR_RAISE(const int64_t column, ToInt(row[1], "column_id"));
      auto& flags = may_hold[file];
      flags.resize(prune.size(), true);
      for (size_t p = 0; p < prune.size(); ++p) {
        if (prune[p].column_id == column) flags[p] = MayHold(prune[p], row[2], row[3], row[4]);
      }
    }
  }
  WEIR_ASSIGN_OR_RAISE(auto current_deletes,
                       db_->Query("SELECT data_file_id, delete_file_id, path, path_is_relative "
                                  "FROM ducklake_delete_file WHERE table_id = $1 AND "
                                  "end_snapshot IS NULL",
                                  {table_id_}));
  std::map<int64_t, SqlRow> delete_of;
  for (auto& row : current_deletes) {
    WEIR_ASSIGN_OR_RAISE(const int64_t file, ToInt(row[0], "data_file_id"));
    delete_of[file] = std::move(row);
  }
  auto fs = filesystem();
  auto resolve = [&](const SqlRow& row, size_t path, size_t relative) -> Result<std::string> {
    if (ToBool(row[relative])) return data_directory_ + row[path].value_or("");
    return catalog_->store().PathOfUri(row[path].value_or(""));
  };

  for (const auto& row : live) {
    WEIR_ASSIGN_OR_RAISE(const int64_t file_id, ToInt(row[0], "data_file_id"));
    const auto flags = may_hold.find(file_id);
    if (flags != may_hold.end() &&
        std::any_of(flags->second.begin(), flags->second.end(), [](bool b) { return !b; })) {
      continue;  // a key column's statistics exclude every flushed value
    }
    ++plan.files_read;
    WEIR_ASSIGN_OR_RAISE(const std::string path, resolve(row, 1, 2));
    WEIR_ASSIGN_OR_RAISE(auto reader, OpenParquet(*fs, path));
    std::shared_ptr<arrow::Schema> schema;
    WEIR_RETURN_NOT_OK(reader->GetSchema(&schema));
    const int64_t rows = reader->parquet_reader()->metadata()->num_rows();
    std::vector<std::shared_ptr<arrow::Array>> file_keys;
    for (const Column* column : key_columns) {
      int field = -1;
      for (int f = 0; column != nullptr && f < schema->num_fields(); ++f) {
        if (files::FieldIdOf(*schema->field(f)) == column->id) field = f;
      }
      for (int f = 0; column != nullptr && field < 0 && f < schema->num_fields(); ++f) {
        if (SameName(schema->field(f)->name(), column->name)) field = f;
      }
      if (field < 0) {
        WEIR_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(arrow::null(), rows));
        file_keys.push_back(nulls);
        continue;
      }
      std::shared_ptr<arrow::ChunkedArray> chunks;
      WEIR_RETURN_NOT_OK(reader->ReadColumn(field, &chunks));
      if (chunks->num_chunks() == 0) {
        WEIR_ASSIGN_OR_RAISE(auto empty, arrow::MakeArrayOfNull(chunks->type(), 0));
        file_keys.push_back(empty);
        continue;
      }
      WEIR_ASSIGN_OR_RAISE(auto array, arrow::Concatenate(chunks->chunks()));
      file_keys.push_back(array);
    }
    WEIR_ASSIGN_OR_RAISE(const auto file_encoded, EncodeRowKeys(file_keys));
    std::vector<int64_t> hits;
    for (size_t r = 0; r < file_encoded.size(); ++r) {
      if (wanted.count(file_encoded[r])) hits.push_back(static_cast<int64_t>(r));
    }
    if (hits.empty()) continue;
    // The positions already deleted (the file's current delete file) stay deleted.
    std::set<int64_t> positions;
    std::optional<int64_t> replaced;
    if (const auto existing = delete_of.find(file_id); existing != delete_of.end()) {
      WEIR_ASSIGN_OR_RAISE(replaced, ToInt(existing->second[1], "delete_file_id"));
      WEIR_ASSIGN_OR_RAISE(const std::string delete_path, resolve(existing->second, 2, 3));
      WEIR_ASSIGN_OR_RAISE(auto deletes_reader, OpenParquet(*fs, delete_path));
      std::shared_ptr<arrow::Schema> delete_schema;
      WEIR_RETURN_NOT_OK(deletes_reader->GetSchema(&delete_schema));
      const int pos = delete_schema->GetFieldIndex("pos");
      if (pos < 0) return Status::Invalid("delete file ", delete_path, " has no pos column");
      std::shared_ptr<arrow::ChunkedArray> chunks;
      WEIR_RETURN_NOT_OK(deletes_reader->ReadColumn(pos, &chunks));
      for (const auto& chunk : chunks->chunks()) {
        WEIR_ASSIGN_OR_RAISE(auto ints, arrow::compute::Cast(*chunk, arrow::int64()));
        const auto& values = static_cast<const arrow::Int64Array&>(*ints);
        for (int64_t i = 0; i < values.length(); ++i) positions.insert(values.Value(i));
      }
    }
    const size_t before = positions.size();
    for (const int64_t hit : hits) positions.insert(hit);
    if (positions.size() == before) continue;  // every hit was deleted already
    plan.rows += static_cast<int64_t>(positions.size() - before);

    // One delete file of every deleted position of the data file, replacing its current one.
    arrow::StringBuilder paths;
    arrow::Int64Builder pos;
    const std::string data_uri =
        ToBool(row[2]) ? data_uri_ + row[1].value_or("") : row[1].value_or("");
    for (const int64_t p : positions) {
      WEIR_RETURN_NOT_OK(paths.Append(data_uri));
      WEIR_RETURN_NOT_OK(pos.Append(p));
    }
    std::shared_ptr<arrow::Array> path_array, pos_array;
    WEIR_RETURN_NOT_OK(paths.Finish(&path_array));
    WEIR_RETURN_NOT_OK(pos.Finish(&pos_array));
    WEIR_ASSIGN_OR_RAISE(
        auto delete_schema,
        files::WithFieldIds(*arrow::schema({arrow::field("file_path", arrow::utf8(), false),
                                            arrow::field("pos", arrow::int64(), false)}),
                            {kFilePathFieldId, kPosFieldId}));
    const auto batch = arrow::RecordBatch::Make(
        delete_schema, static_cast<int64_t>(positions.size()), {path_array, pos_array});
    DeleteFile out;
    out.data_file_id = file_id;
    out.replaces = replaced;
    out.count = static_cast<int64_t>(positions.size());
    std::string name = files::DataFileName("", uuids_.Next());
    if (name.size() > 8 && name.ends_with(".parquet")) {
      name = name.substr(0, name.size() - 8) + "-delete.parquet";
    }
    out.relative_path = name;
    files::FileConfig config;
    WEIR_ASSIGN_OR_RAISE(auto writer,
                         files::ParquetFileWriter::Create(fs, data_directory_ + out.relative_path,
                                                          delete_schema, config));
    unreferenced_deletes_.push_back(data_directory_ + out.relative_path);
    WEIR_RETURN_NOT_OK(writer->Append(*batch));
    WEIR_ASSIGN_OR_RAISE(out.info, writer->Finish());
    plan.files.push_back(std::move(out));
  }
  return plan;
}

Status DuckLakeTable::InsertDeletes(const DeletePlan& plan, int64_t snapshot_id,
                                    int64_t& next_file_id) {
  if (plan.files.empty()) return Status::OK();
  std::string replaced;
  int64_t replacing = 0;
  for (const auto& file : plan.files) {
    if (!file.replaces) continue;
    replaced += (replaced.empty() ? "" : ", ") + std::to_string(*file.replaces);
    ++replacing;
  }
  if (replacing > 0) {
    WEIR_ASSIGN_OR_RAISE(
        const int64_t ended,
        db_->Execute(fmt::format("UPDATE ducklake_delete_file SET end_snapshot = $1 WHERE "
                                 "table_id = $2 AND end_snapshot IS NULL AND delete_file_id IN "
                                 "({})",
                                 replaced),
                     {snapshot_id, table_id_}));
    if (ended != replacing) {
      return ClassifiedError(ErrorClass::kRetriable, "ducklake", "ledger_moved",
                             "a delete file was replaced during the commit");
    }
  }
  BatchInsert rows(*db_,
                   "ducklake_delete_file (delete_file_id, table_id, begin_snapshot, end_snapshot, "
                   "data_file_id, path, path_is_relative, format, delete_count, file_size_bytes, "
                   "footer_size, encryption_key, partial_max)",
                   13);
  const SqlValue null;
  for (const auto& file : plan.files) {
    WEIR_RETURN_NOT_OK(rows.Add({next_file_id++, table_id_, snapshot_id, null, file.data_file_id,
                                 file.relative_path, true, std::string("parquet"), file.count,
                                 file.info.size_bytes, file.info.footer_bytes, null, null}));
  }
  return rows.Finish();
}

void DuckLakeTable::DropUnreferencedDeletes() {
  for (const auto& path : unreferenced_deletes_) {
    if (auto deleted = filesystem()->DeleteFile(path); !deleted.ok()) {
      spdlog::warn("cannot delete orphan delete file {}: {}", path, deleted.message());
    }
  }
  unreferenced_deletes_.clear();
}

}  // namespace weir::lake::ducklake
