#include "ingest/wal_rows.h"

#include <arrow/array/builder_primitive.h>
#include <arrow/array/util.h>
#include <arrow/compute/api.h>
#include <arrow/scalar.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "files/parquet_file_writer.h"
#include "ingest/coerce.h"
#include "ingest/column_plan.h"
#include "wal/segment_metadata.h"

namespace weir::ingest {
namespace {

std::string KeyOf(const std::vector<lake::PartitionValue>& values) {
  std::string key;
  for (const auto& value : values) {
    key += value ? "v" + std::to_string(value->size()) + ":" + *value : "n";
    key += '|';
  }
  return key;
}

}  // namespace

Status WalTableRows::EnsureTable(const arrow::RecordBatch& batch) {
  // Another writer (weir serve, DuckDB, a Spark job) changed the table between its load and our
  // schema change: reopen it and plan again, as direct mode's flush does.
  for (int reloads = 0;; ++reloads) {
    WEIR_ASSIGN_OR_RAISE(const bool ready, TryEnsureTable(batch));
    if (ready) return Status::OK();
    if (reloads == kMaxReloads) {
      return ClassifiedError(
          ErrorClass::kRetriable, "ingest", "table_changed",
          fmt::format("dataset {}: table {}.{} changed under every one of {} "
                      "schema changes in a row",
                      config_.name, config_.schema, config_.table, kMaxReloads + 1));
    }
    spdlog::info("dataset {}: table {}.{} changed under its schema change; reloaded", config_.name,
                 config_.schema, config_.table);
    table_.reset();
  }
}

Result<bool> WalTableRows::TryEnsureTable(const arrow::RecordBatch& batch) {
  const ColumnPlan first = PlanColumns(
      *batch.schema(), table_ ? table_->columns() : std::vector<lake::Column>{}, refused_);
  if (!table_) {
    std::vector<lake::NewColumn> columns;
    for (const auto& column : first.missing) columns.emplace_back(column.name, column.type);
    columns.emplace_back(kInsertedAt, lake::ColumnType::kTimestampTz);
    WEIR_ASSIGN_OR_RAISE(auto opened, catalog_->OpenTable(DatasetWriter::Spec(config_, columns),
                                                          lake::OpenMode::kOpenOrCreate));
    if (opened.status != lake::OpenStatus::kOpened) {
      return ClassifiedError(ErrorClass::kFatal, "ingest", "create_refused",
                             fmt::format("dataset {}: table {}.{}: {}", config_.name,
                                         config_.schema, config_.table, opened.reason));
    }
    table_ = std::move(opened.table);
  }
  ColumnPlan plan = PlanColumns(*batch.schema(), table_->columns(), refused_);
  for (const auto& column : plan.missing) {
    WEIR_ASSIGN_OR_RAISE(const auto one,
                         table_->Evolve(lake::SchemaChange{{{column.name, column.type}}, {}}));
    if (one.status == lake::EvolveStatus::kRefused) {
      spdlog::warn("dataset {}: column \"{}\" refused by the catalog ({}); left out", config_.name,
                   column.name, one.reason);
      refused_.insert(column.name);
    } else if (one.status == lake::EvolveStatus::kTableChanged) {
      return false;
    }
  }
  // Live columns the batch needs wider.
  plan = PlanColumns(*batch.schema(), table_->columns(), refused_);
  lake::SchemaChange widen;
  const auto& live = table_->columns();
  for (size_t c = 0; c < live.size(); ++c) {
    if (plan.sources[c].empty() || refused_.count("promote:" + live[c].name)) continue;
    std::optional<lake::ColumnType> wanted;
    for (const int f : plan.sources[c]) {
      const auto type = ColumnTypeOf(*batch.schema()->field(f)->type());
      wanted = wanted ? JoinColumnTypes(*wanted, type) : type;
    }
    if (const auto wider = lake::PromotionFor(live[c].type, *wanted)) {
      widen.promote.emplace_back(live[c].name, *wider);
    }
  }
  if (!widen.promote.empty()) {
    WEIR_ASSIGN_OR_RAISE(const auto evolved, table_->Evolve(widen));
    if (evolved.status == lake::EvolveStatus::kRefused) {
      for (const auto& [column, type] : widen.promote) refused_.insert("promote:" + column);
    } else if (evolved.status == lake::EvolveStatus::kTableChanged) {
      return false;
    }
  }
  return true;
}

Result<std::vector<wal::PartitionRows>> WalTableRows::Shape(const arrow::RecordBatch& decoded,
                                                            int64_t inserted_at_us,
                                                            int64_t* nulled) {
  WEIR_RETURN_NOT_OK(EnsureTable(decoded));
  const ColumnPlan plan = PlanColumns(*decoded.schema(), table_->columns(), refused_);
  const int64_t n = decoded.num_rows();
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<std::shared_ptr<arrow::Array>> arrays;
  std::vector<int> ids;
  const auto& live = table_->columns();
  for (size_t c = 0; c < live.size(); ++c) {
    const lake::Column& column = live[c];
    if (!IsWritable(column.type)) continue;
    std::shared_ptr<arrow::Array> array;
    if (column.name == kInsertedAt) {
      WEIR_ASSIGN_OR_RAISE(
          array, arrow::MakeArrayFromScalar(
                     arrow::TimestampScalar(inserted_at_us,
                                            arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
                     n));
    } else if (plan.sources[c].empty()) {
      WEIR_ASSIGN_OR_RAISE(array, arrow::MakeArrayOfNull(ArrowTypeOf(column.type), n));
    } else {
      std::vector<arrow::Datum> spellings;
      for (const int f : plan.sources[c]) {
        WEIR_ASSIGN_OR_RAISE(auto coerced, CoerceTo(*decoded.column(f), column.type));
        *nulled += coerced.nulled;
        spellings.emplace_back(coerced.array);
      }
      if (spellings.size() == 1) {
        array = spellings.front().make_array();
      } else {
        WEIR_ASSIGN_OR_RAISE(auto merged, arrow::compute::CallFunction("coalesce", spellings));
        array = merged.make_array();
      }
    }
    fields.push_back(arrow::field(column.name, array->type()));
    arrays.push_back(std::move(array));
    ids.push_back(static_cast<int>(column.id));
  }
  WEIR_ASSIGN_OR_RAISE(auto schema, files::WithFieldIds(*arrow::schema(fields), ids));
  auto rows = arrow::RecordBatch::Make(schema, n, arrays);
  std::vector<wal::PartitionRows> out;
  WEIR_ASSIGN_OR_RAISE(const auto groups, table_->Partition(*rows));
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
    out.push_back(wal::PartitionRows{KeyOf(values), wal::PartitionMetadata(values), part});
  }
  return out;
}

}  // namespace weir::ingest
