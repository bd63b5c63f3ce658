#include "ingest/dataset_writer.h"

#include <unistd.h>

#include <random>
#include <thread>

#include <arrow/array/util.h>
#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <arrow/compute/api_vector.h>
#include <arrow/compute/initialize.h>
#include <arrow/datum.h>
#include <arrow/scalar.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/backoff.h"
#include "base/check.h"
#include "base/clock.h"
#include "decode/field_names.h"
#include "ingest/coerce.h"
#include "lake/ducklake/stats_text.h"

namespace weir::ingest {
namespace {

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown-host";
  return name;
}

bool IsTableChanged(const Status& status) {
  const ErrorDetail* detail = GetErrorDetail(status);
  return detail != nullptr && detail->source() == "ducklake" && detail->code() == "table_changed";
}

}  // namespace

DatasetWriter::DatasetWriter(DatasetConfig config, lake::ducklake::DuckLakeCatalog* catalog)
    : config_(std::move(config)),
      catalog_(catalog),
      commit_ids_(Clock::System(), std::random_device{}()),
      writer_prefix_(fmt::format("{}/{}", HostName(), ::getpid())) {
  static std::once_flag compute_ready;
  std::call_once(compute_ready, [] {
    // Registers the kernels of libarrow_compute (Take); fails only on a broken installation.
    WEIR_CHECK(arrow::compute::Initialize().ok());
  });
}

Status DatasetWriter::CreateTable(const ColumnPlan& plan) {
  std::vector<std::pair<std::string, lake::ColumnType>> columns;
  for (const auto& column : plan.missing) columns.emplace_back(column.name, column.type);
  columns.emplace_back(kInsertedAt, lake::ColumnType::kTimestampTz);
  auto opened = catalog_->OpenTable(config_.schema, config_.table, columns, config_.partitioning);
  if (!opened.ok() && ClassOf(opened.status()) == ErrorClass::kBadData) {
    // The data's columns were refused: create the table without them, then add them one by
    // one so that only the refused ones are left out.
    spdlog::warn(
        "dataset {}: {}; creating the table with {} only and adding its columns one by "
        "one",
        config_.name, opened.status().message(), kInsertedAt);
    opened =
        catalog_->OpenTable(config_.schema, config_.table,
                            {{kInsertedAt, lake::ColumnType::kTimestampTz}}, config_.partitioning);
    if (!opened.ok() && ClassOf(opened.status()) == ErrorClass::kBadData) {
      // Without a single data column the refusal cannot stem from the data.
      return ClassifiedError(ErrorClass::kFatal, "ducklake", "create_refused",
                             opened.status().message());
    }
  }
  WEIR_ASSIGN_OR_RAISE(table_, std::move(opened));
  return Status::OK();
}

Status DatasetWriter::AddColumns(const std::vector<ColumnPlan::NewColumn>& columns) {
  std::vector<std::pair<std::string, lake::ColumnType>> all;
  for (const auto& column : columns) all.emplace_back(column.name, column.type);
  const Status added = table_->AddColumns(all);
  if (added.ok() || ClassOf(added) != ErrorClass::kBadData) return added;
  // One of them was refused (its name comes from the data): find which, add the others.
  for (const auto& column : columns) {
    const Status one = table_->AddColumns({{column.name, column.type}});
    if (one.ok()) continue;
    if (ClassOf(one) != ErrorClass::kBadData) return one;
    refused_.insert(decode::FoldName(column.name));
    spdlog::warn(
        "dataset {}: column \"{}\" left out of {} (its values are dropped and counted "
        "as refused_by_catalog): {}",
        config_.name, column.name, table_->name(), one.message());
  }
  return Status::OK();
}

Status DatasetWriter::EnsureTables(const arrow::RecordBatch& batch, bool need_rejects,
                                   FlushOutcome& outcome) {
  const arrow::Schema& schema = *batch.schema();
  if (!table_) WEIR_RETURN_NOT_OK(CreateTable(PlanColumns(schema, {}, refused_)));
  // Columns the table lacks are added before the data commit, in one schema change.
  plan_ = PlanColumns(schema, table_->columns(), refused_);
  if (!plan_.missing.empty()) {
    const size_t before = table_->columns().size();
    WEIR_RETURN_NOT_OK(AddColumns(plan_.missing));
    if (table_->columns().size() > before) {
      spdlog::info("dataset {}: added {} column(s) to {}", config_.name,
                   table_->columns().size() - before, table_->name());
    }
    plan_ = PlanColumns(schema, table_->columns(), refused_);
    if (!plan_.missing.empty()) {
      return ClassifiedError(ErrorClass::kRetriable, "ducklake", "table_changed",
                             fmt::format("column \"{}\" is missing from {} after adding it",
                                         plan_.missing.front().name, table_->name()));
    }
  }
  for (const int field : plan_.refused) {
    const auto& values = *batch.column(field);
    outcome.fields_dropped["refused_by_catalog"] += values.length() - values.null_count();
  }
  if (need_rejects && !rejects_table_) {
    WEIR_ASSIGN_OR_RAISE(
        rejects_table_,
        catalog_->OpenTable(config_.schema, config_.table + "_rejects", RejectsColumns(), {}));
  }
  return Status::OK();
}

Result<DatasetWriter::WrittenFiles> DatasetWriter::WriteFiles(const SealedFlush& flush,
                                                              int64_t inserted_at_us,
                                                              FlushOutcome& outcome) {
  WrittenFiles written;
  const auto& batch = *flush.batch;
  if (batch.num_rows() > 0) {
    std::vector<std::shared_ptr<arrow::Field>> fields;
    std::vector<std::shared_ptr<arrow::Array>> arrays;
    std::vector<int> ids;
    const auto& live = table_->columns();
    for (size_t c = 0; c < live.size(); ++c) {
      const lake::Column& column = live[c];
      std::shared_ptr<arrow::Array> array;
      if (column.name == kInsertedAt) {
        WEIR_ASSIGN_OR_RAISE(
            array, arrow::MakeArrayFromScalar(
                       arrow::TimestampScalar(inserted_at_us,
                                              arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
                       batch.num_rows()));
      } else {
        const auto& sources = plan_.sources[c];
        if (sources.empty()) continue;  // the flush has no value for it: null when read
        if (column.type == lake::ColumnType::kOther) {
          for (const int f : sources) {
            outcome.values_nulled += batch.column(f)->length() - batch.column(f)->null_count();
          }
          continue;
        }
        // Each spelling resolving to this column, cast to its type; one record holds at most
        // one spelling, so at most one of them has a value in each row.
        std::vector<arrow::Datum> spellings;
        for (const int f : sources) {
          const auto& source = *batch.column(f);
          WEIR_ASSIGN_OR_RAISE(auto coerced, CoerceTo(source, column.type));
          outcome.values_nulled += coerced.nulled;
          if (batch.schema()->field(f)->name() != column.name) {
            outcome.fields_renamed["case_variant"] += source.length() - source.null_count();
          }
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
      arrays.push_back(array);
      ids.push_back(static_cast<int>(column.id));
    }
    WEIR_ASSIGN_OR_RAISE(auto schema, files::WithFieldIds(*arrow::schema(fields), ids));
    auto rows = arrow::RecordBatch::Make(schema, batch.num_rows(), arrays);
    // One file per partition tuple: transforms of _inserted_at are the same for every row of
    // a flush; identity keys on data columns split the rows by value.
    std::map<std::vector<std::optional<std::string>>, std::vector<int64_t>> groups;
    std::vector<std::shared_ptr<arrow::Array>> key_arrays;
    for (const auto& key : table_->partitioning()) {
      key_arrays.push_back(key.column == kInsertedAt ? nullptr : rows->GetColumnByName(key.column));
    }
    for (int64_t row = 0; row < rows->num_rows(); ++row) {
      std::vector<std::optional<std::string>> values;
      for (size_t k = 0; k < table_->partitioning().size(); ++k) {
        const auto& key = table_->partitioning()[k];
        if (key.column == kInsertedAt) {
          values.push_back(
              key.transform == "identity"
                  ? lake::ducklake::TimestampText(inserted_at_us)
                  : lake::ducklake::TimestampPartitionValue(key.transform, inserted_at_us));
        } else {
          values.push_back(key_arrays[k] ? ValueText(*key_arrays[k], row) : std::nullopt);
        }
      }
      groups[std::move(values)].push_back(row);
    }
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
      lake::DataFile file;
      file.relative_path = table_->NewFilePath(values);
      file.partition_values = values;
      WEIR_ASSIGN_OR_RAISE(auto writer,
                           files::ParquetFileWriter::Create(
                               table_->filesystem(), table_->DataDirectory() + file.relative_path,
                               schema, config_.file));
      WEIR_RETURN_NOT_OK(writer->Append(*part));
      WEIR_ASSIGN_OR_RAISE(file.info, writer->Finish());
      outcome.bytes_written += file.info.size_bytes;
      written.data.push_back(std::move(file));
    }
  }
  if (!flush.rejects.empty() && rejects_table_) {
    WEIR_ASSIGN_OR_RAISE(auto rejects, RejectsBatch(flush.rejects, rejects_table_->columns()));
    lake::DataFile file;
    file.relative_path = rejects_table_->NewFilePath({});
    WEIR_ASSIGN_OR_RAISE(auto writer, files::ParquetFileWriter::Create(
                                          rejects_table_->filesystem(),
                                          rejects_table_->DataDirectory() + file.relative_path,
                                          rejects->schema(), config_.file));
    WEIR_RETURN_NOT_OK(writer->Append(*rejects));
    WEIR_ASSIGN_OR_RAISE(file.info, writer->Finish());
    outcome.bytes_written += file.info.size_bytes;
    written.rejects.push_back(std::move(file));
  }
  return written;
}

void DatasetWriter::DeleteFiles(const WrittenFiles& files) {
  for (const auto& file : files.data) {
    auto deleted = table_->filesystem()->DeleteFile(file.info.path);
    if (!deleted.ok())
      spdlog::warn("cannot delete orphan {}: {}", file.info.path, deleted.message());
  }
  for (const auto& file : files.rejects) {
    auto deleted = rejects_table_->filesystem()->DeleteFile(file.info.path);
    if (!deleted.ok())
      spdlog::warn("cannot delete orphan {}: {}", file.info.path, deleted.message());
  }
}

Result<FlushOutcome> DatasetWriter::Write(const SealedFlush& flush) {
  Backoff backoff(BackoffPolicy{.max_attempts = config_.commit_max_attempts},
                  std::random_device{}());
  const bool with_rejects = config_.rejects_enabled && !flush.rejects.empty();
  while (true) {
    FlushOutcome outcome;
    const auto started = std::chrono::steady_clock::now();
    // The writer id is fixed per attempt at writing files: a commit retried with the same files
    // recognises its own landing after an unknown outcome.
    const std::string writer = writer_prefix_ + "/" + commit_ids_.Next().ToString();
    Status status = EnsureTables(*flush.batch, with_rejects, outcome);
    Result<WrittenFiles> written =
        status.ok() ? WriteFiles(flush, UnixMicros(Clock::System().Now()), outcome)
                    : Result<WrittenFiles>(status);
    const auto wrote = std::chrono::steady_clock::now();
    outcome.write_time = std::chrono::duration_cast<std::chrono::milliseconds>(wrote - started);
    if (written.ok()) {
      lake::CommitRequest request;
      request.files = written->data;
      request.offsets = flush.offsets;
      request.writer = writer;
      request.message = fmt::format("weir dataset {}", config_.name);
      if (!written->rejects.empty()) {
        request.companion = rejects_table_.get();
        request.companion_files = written->rejects;
      }
      // Commit attempts with these files; a changed table means writing them again.
      while (true) {
        ++outcome.commit_attempts;
        auto committed = table_->Commit(request);
        if (committed.ok()) {
          outcome.commit_time = std::chrono::duration_cast<std::chrono::milliseconds>(
              std::chrono::steady_clock::now() - wrote);
          outcome.conflicts = committed->conflicts;
          outcome.files = static_cast<int64_t>(written->data.size() + written->rejects.size());
          if (committed->fenced) {
            DeleteFiles(*written);
            outcome.fenced = true;
            outcome.orphaned_files = outcome.files;
            outcome.files = 0;
            return outcome;
          }
          outcome.snapshot_id = committed->snapshot_id;
          outcome.rows = flush.batch->num_rows();
          outcome.rejects = with_rejects ? static_cast<int64_t>(flush.rejects.size()) : 0;
          return outcome;
        }
        status = committed.status();
        if (IsTableChanged(status) || ClassOf(status) != ErrorClass::kRetriable) break;
        const auto delay = backoff.Next();
        if (!delay) break;
        spdlog::warn("dataset {}: commit failed ({}); retrying in {} ms", config_.name,
                     status.message(), delay->count());
        std::this_thread::sleep_for(*delay);
      }
      if (IsTableChanged(status)) {
        // Refused before anything was written: the files are surely unreferenced.
        DeleteFiles(*written);
      } else {
        // The outcome may be unknown (the link dropped at COMMIT): the files stay, and the
        // maintenance's orphan sweep removes them if no snapshot references them.
        spdlog::warn("dataset {}: {} file(s) of an uncommitted flush left for orphan cleanup",
                     config_.name, written->data.size() + written->rejects.size());
      }
    } else {
      status = written.status();
    }
    if (IsTableChanged(status)) {
      // Another writer changed the table under us: reload it and write the flush again.
      spdlog::warn("dataset {}: {}; reloading the table", config_.name, status.message());
      table_.reset();
      rejects_table_.reset();
    } else if (ClassOf(status) != ErrorClass::kRetriable) {
      return WithContext(status, "dataset " + config_.name);
    }
    const auto delay = backoff.Next();
    if (!delay) {
      return WithContext(status, fmt::format("dataset {}: retry budget of {} attempts spent",
                                             config_.name, config_.commit_max_attempts));
    }
    std::this_thread::sleep_for(*delay);
  }
}

}  // namespace weir::ingest
