// An upsert commit's deletes on Iceberg (docs/ARCHITECTURE.md, "Upsert datasets"): equality
// delete files on the key columns, one per partition tuple of the flush's keys. They go into
// the commit's own snapshot, whose data sequence number is above every older data file's and
// equal to the commit's own inserts': the spec applies an equality delete only to data files
// of a strictly lower sequence number, in the delete file's partition, so the older rows of
// the keys go and the new rows stay.
#include <fmt/format.h>

#include <arrow/builder.h>
#include <arrow/compute/api.h>

#include "files/parquet_file_writer.h"
#include "lake/iceberg/iceberg_table.h"

namespace weir::lake::iceberg {

Result<std::vector<iceberg::DataFile>> IcebergTable::WriteEqualityDeletes(
    const KeyDeletes& deletes, std::vector<std::string>& paths) {
  const Schema& schema = current_.metadata.current_schema();
  const arrow::RecordBatch& keys = *deletes.keys;
  if (keys.num_columns() != static_cast<int>(deletes.columns.size())) {
    return Status::Invalid("the key deletes of ", name_, " have ", keys.num_columns(),
                           " columns for ", deletes.columns.size(), " key columns");
  }
  std::vector<int> ids;
  for (size_t k = 0; k < deletes.columns.size(); ++k) {
    const std::string& column = deletes.columns[k];
    const NestedField* field = schema.FindTopLevel(column);
    if (field == nullptr || keys.column(static_cast<int>(k))->type_id() == arrow::Type::NA) {
      return ClassifiedError(
          ErrorClass::kFatal, "iceberg", "upsert_key_missing",
          fmt::format("upsert key column \"{}\" is not a column of {}: Iceberg's equality "
                      "deletes name the table's columns",
                      column, name_));
    }
    // The spec's restriction on equality delete columns (those of identifier fields, optional
    // allowed): no float, double or nested types.
    if (field->type.id == TypeId::kFloat || field->type.id == TypeId::kDouble ||
        !field->type.is_primitive()) {
      return ClassifiedError(
          ErrorClass::kFatal, "iceberg", "upsert_key_type",
          fmt::format("upsert key column \"{}\" of {} is a {}: Iceberg's equality deletes "
                      "cannot match float, double or nested columns",
                      column, name_, iceberg::ToString(field->type)));
    }
    ids.push_back(field->id);
  }
  std::vector<std::shared_ptr<arrow::Field>> fields;
  for (size_t k = 0; k < deletes.columns.size(); ++k) {
    fields.push_back(arrow::field(deletes.columns[k], keys.column(static_cast<int>(k))->type()));
  }
  WEIR_ASSIGN_OR_RAISE(const auto file_schema, files::WithFieldIds(*arrow::schema(fields), ids));
  const auto rows = arrow::RecordBatch::Make(file_schema, keys.num_rows(), keys.columns());

  std::vector<iceberg::DataFile> out;
  if (rows->num_rows() == 0) return out;
  // Every partition source column is a key column (validated at startup), so each key has
  // one partition tuple, the one its rows were written under.
  WEIR_ASSIGN_OR_RAISE(const std::vector<PartitionGroup> groups, Partition(*rows));
  for (const auto& [values, row_ids] : groups) {
    std::shared_ptr<arrow::RecordBatch> part = rows;
    if (groups.size() > 1) {
      arrow::Int64Builder indices;
      WEIR_RETURN_NOT_OK(indices.AppendValues(row_ids));
      WEIR_ASSIGN_OR_RAISE(auto index_array, indices.Finish());
      WEIR_ASSIGN_OR_RAISE(auto taken,
                           arrow::compute::Take(arrow::Datum(rows), arrow::Datum(index_array)));
      part = taken.record_batch();
    }
    std::string relative = NewFilePath(values);
    if (relative.ends_with(".parquet")) {
      relative = relative.substr(0, relative.size() - 8) + "-eq-delete.parquet";
    }
    const std::string path = data_directory_ + relative;
    paths.push_back(path);
    WEIR_ASSIGN_OR_RAISE(auto writer, files::ParquetFileWriter::Create(io_.fs, path, file_schema,
                                                                       files::FileConfig{}));
    WEIR_RETURN_NOT_OK(writer->Append(*part));
    WEIR_ASSIGN_OR_RAISE(const files::FileInfo info, writer->Finish());
    WEIR_ASSIGN_OR_RAISE(iceberg::DataFile file,
                         ManifestFileOf(lake::DataFile{relative, info, values}));
    file.content = FileContent::kEqualityDeletes;
    file.equality_ids = ids;
    out.push_back(std::move(file));
  }
  return out;
}

}  // namespace weir::lake::iceberg
