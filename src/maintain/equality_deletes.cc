#include "maintain/equality_deletes.h"

#include <algorithm>

#include <arrow/array.h>
#include <arrow/array/concatenate.h>
#include <arrow/array/util.h>
#include <arrow/chunked_array.h>
#include <arrow/table.h>
#include <parquet/arrow/reader.h>

#include "files/parquet_file_writer.h"
#include "lake/row_keys.h"

namespace weir::maintain {
namespace {

struct OpenedFile {
  std::unique_ptr<parquet::arrow::FileReader> reader;
  std::shared_ptr<arrow::Schema> schema;
  int64_t rows = 0;
};

Result<OpenedFile> Open(arrow::fs::FileSystem& fs, const std::string& path) {
  WEIR_ASSIGN_OR_RAISE(auto input, fs.OpenInputFile(path));
  parquet::arrow::FileReaderBuilder builder;
  if (Status opened = builder.Open(input); !opened.ok()) return WithContext(opened, path);
  OpenedFile out;
  WEIR_RETURN_NOT_OK(builder.Build(&out.reader));
  WEIR_RETURN_NOT_OK(out.reader->GetSchema(&out.schema));
  out.rows = out.reader->parquet_reader()->metadata()->num_rows();
  return out;
}

// The top-level column of `file` with field id `id`, or -1.
int ColumnOf(const OpenedFile& file, int id) {
  for (int i = 0; i < file.schema->num_fields(); ++i) {
    if (files::FieldIdOf(*file.schema->field(i)) == id) return i;
  }
  return -1;
}

Result<std::shared_ptr<arrow::Array>> ReadWhole(const OpenedFile& file, int column,
                                                const std::string& path) {
  std::shared_ptr<arrow::ChunkedArray> chunked;
  if (Status read = file.reader->ReadColumn(column, &chunked); !read.ok()) {
    return WithContext(read, path);
  }
  if (chunked->num_chunks() == 1) return chunked->chunk(0);
  return arrow::Concatenate(chunked->chunks());
}

}  // namespace

Result<const EqualityDeletes::KeySet*> EqualityDeletes::Load(const lake::EqualityDeletes& deletes) {
  if (const auto found = loaded_.find(deletes.path); found != loaded_.end()) return &found->second;
  WEIR_ASSIGN_OR_RAISE(const OpenedFile file, Open(*fs_, deletes.path));
  KeySet set;
  std::vector<std::shared_ptr<arrow::Array>> columns;
  for (const int id : deletes.field_ids) {
    const int column = ColumnOf(file, id);
    if (column < 0) {
      return Status::Invalid("equality delete file ", deletes.path, " has no column of field id ",
                             id, ", one of its equality ids");
    }
    WEIR_ASSIGN_OR_RAISE(auto values, ReadWhole(file, column, deletes.path));
    set.types.push_back(values->type());
    columns.push_back(std::move(values));
  }
  if (file.rows > 0) {
    WEIR_ASSIGN_OR_RAISE(auto keys, lake::EncodeRowKeys(columns));
    set.keys.reserve(keys.size());
    for (auto& key : keys) set.keys.insert(std::move(key));
  }
  return &loaded_.emplace(deletes.path, std::move(set)).first->second;
}

Result<std::vector<int64_t>> EqualityDeletes::DeletedPositions(const lake::LakeFile& file) {
  std::vector<int64_t> positions;
  if (file.equality_deletes.empty()) return positions;
  WEIR_ASSIGN_OR_RAISE(const OpenedFile data, Open(*fs_, file.path));
  // The data file's key columns, read once per field id whatever the delete files share.
  std::unordered_map<int, std::shared_ptr<arrow::Array>> read;
  for (const lake::EqualityDeletes& deletes : file.equality_deletes) {
    WEIR_ASSIGN_OR_RAISE(const KeySet* set, Load(deletes));
    if (set->keys.empty()) continue;
    std::vector<std::shared_ptr<arrow::Array>> columns;
    for (size_t k = 0; k < deletes.field_ids.size(); ++k) {
      const int id = deletes.field_ids[k];
      auto& values = read[id];
      if (values == nullptr) {
        const int column = ColumnOf(data, id);
        if (column >= 0) {
          WEIR_ASSIGN_OR_RAISE(values, ReadWhole(data, column, file.path));
        } else {
          WEIR_ASSIGN_OR_RAISE(values, arrow::MakeArrayOfNull(set->types[k], data.rows));
        }
      }
      columns.push_back(values);
    }
    WEIR_ASSIGN_OR_RAISE(const auto keys, lake::EncodeRowKeys(columns));
    for (size_t r = 0; r < keys.size(); ++r) {
      if (set->keys.contains(keys[r])) positions.push_back(static_cast<int64_t>(r));
    }
  }
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  return positions;
}

}  // namespace weir::maintain
