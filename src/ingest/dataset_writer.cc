#include "ingest/dataset_writer.h"

#include <unistd.h>

#include <algorithm>
#include <random>

#include <arrow/array/util.h>
#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <arrow/compute/api_vector.h>
#include <arrow/compute/initialize.h>
#include <arrow/datum.h>
#include <arrow/scalar.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "base/check.h"
#include "base/clock.h"
#include "decode/field_names.h"
#include "ingest/coerce.h"
#include "ingest/row_sort.h"
#include "ingest/upsert_rows.h"

namespace weir::ingest {
namespace {

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown-host";
  return name;
}

// Lost races to concurrent commits are retried quickly; this budget is about contention, not
// outages. A stop does not cut these waits short: they are at most a second, and abandoning a
// race would fail the drain of every writer sharing a catalog that stops at the same time.
constexpr BackoffPolicy kConflictPolicy{.initial = std::chrono::milliseconds(20),
                                        .multiplier = 1.5,
                                        .cap = std::chrono::milliseconds(1000),
                                        .max_jitter = 0.25,
                                        .max_attempts = 200};

}  // namespace

DatasetWriter::DatasetWriter(DatasetConfig config, lake::Catalog* catalog, std::stop_token stop)
    : config_(std::move(config)),
      catalog_(catalog),
      stop_(std::move(stop)),
      retrier_policy_(config_.backoff),
      commit_ids_(Clock::System(), std::random_device{}()),
      writer_prefix_(fmt::format("{}/{}", HostName(), ::getpid())) {
  retrier_policy_.max_attempts = config_.commit_max_attempts;
  static std::once_flag compute_ready;
  std::call_once(compute_ready, [] {
    // Registers the kernels of libarrow_compute (Take); fails only on a broken installation.
    WEIR_CHECK(arrow::compute::Initialize().ok());
  });
}

Result<std::map<int32_t, int64_t>> DatasetWriter::ReadLedger(lake::Catalog& catalog,
                                                             const DatasetConfig& config,
                                                             std::unique_ptr<lake::Table>& table,
                                                             const std::string& topic) {
  if (!table) {
    auto opened = catalog.OpenTable(Spec(config), lake::OpenMode::kOpenOnly);
    if (!opened.ok()) return WithContext(opened.status(), "reading the offset ledger");
    if (opened->status != lake::OpenStatus::kOpened) return std::map<int32_t, int64_t>{};
    table = std::move(opened->table);
  }
  return table->ReadLedger(topic);
}

lake::TableSpec DatasetWriter::Spec(const DatasetConfig& config,
                                    std::vector<lake::NewColumn> columns) {
  return lake::TableSpec{config.schema,       config.table,     std::move(columns),
                         config.partitioning, config.sort_keys, config.upsert_deletion_vectors};
}

Result<std::map<int32_t, int64_t>> DatasetWriter::ReadLedger(const std::string& topic) {
  if (!table_) {
    WEIR_ASSIGN_OR_RAISE(auto opened,
                         catalog_->OpenTable(Spec(config_), lake::OpenMode::kOpenOnly));
    if (opened.status != lake::OpenStatus::kOpened) return std::map<int32_t, int64_t>{};
    table_ = std::move(opened.table);
  }
  return table_->ReadLedger(topic);
}

Status DatasetWriter::CreateTable(const ColumnPlan& plan) {
  std::vector<lake::NewColumn> columns;
  for (const auto& column : plan.missing) columns.emplace_back(column.name, column.type);
  columns.emplace_back(kInsertedAt, lake::ColumnType::kTimestampTz);
  WEIR_ASSIGN_OR_RAISE(auto opened,
                       catalog_->OpenTable(Spec(config_, columns), lake::OpenMode::kOpenOrCreate));
  if (opened.status == lake::OpenStatus::kColumnsRefused) {
    // The data's columns were refused: create the table without them, then add them one by
    // one so that only the refused ones are left out.
    spdlog::warn(
        "dataset {}: {}; creating the table with {} only and adding its columns one by "
        "one",
        config_.name, opened.reason, kInsertedAt);
    WEIR_ASSIGN_OR_RAISE(
        opened, catalog_->OpenTable(Spec(config_, {{kInsertedAt, lake::ColumnType::kTimestampTz}}),
                                    lake::OpenMode::kOpenOrCreate));
    if (opened.status == lake::OpenStatus::kColumnsRefused) {
      // Without a single data column the refusal cannot stem from the data.
      return ClassifiedError(ErrorClass::kFatal, "ingest", "create_refused", opened.reason);
    }
  }
  if (opened.status != lake::OpenStatus::kOpened) {
    return Status::UnknownError("table ", config_.schema, ".", config_.table,
                                " missing after creating it");
  }
  table_ = std::move(opened.table);
  return Status::OK();
}

Result<DatasetWriter::Prepared> DatasetWriter::AddColumns(
    const std::vector<ColumnPlan::NewColumn>& columns) {
  lake::SchemaChange all;
  for (const auto& column : columns) all.add.emplace_back(column.name, column.type);
  WEIR_ASSIGN_OR_RAISE(const auto evolved, table_->Evolve(all));
  if (evolved.status == lake::EvolveStatus::kTableChanged) return Prepared::kTableChanged;
  if (evolved.status == lake::EvolveStatus::kEvolved) return Prepared::kReady;
  // One of them was refused (its name comes from the data): find which, add the others.
  for (const auto& column : columns) {
    WEIR_ASSIGN_OR_RAISE(const auto one,
                         table_->Evolve(lake::SchemaChange{{{column.name, column.type}}, {}}));
    if (one.status == lake::EvolveStatus::kTableChanged) return Prepared::kTableChanged;
    if (one.status == lake::EvolveStatus::kEvolved) continue;
    refused_.insert(decode::FoldName(column.name));
    spdlog::warn(
        "dataset {}: column \"{}\" left out of {} (its values are dropped and counted "
        "as refused_by_catalog): {}",
        config_.name, column.name, table_->name(), one.reason);
  }
  return Prepared::kReady;
}

Result<DatasetWriter::Prepared> DatasetWriter::PromoteColumns(const arrow::RecordBatch& batch) {
  lake::SchemaChange change;
  const auto& live = table_->columns();
  for (size_t c = 0; c < live.size(); ++c) {
    if (plan_.sources[c].empty() || unpromotable_.count(live[c].name)) continue;
    std::optional<lake::ColumnType> wanted;
    for (const int f : plan_.sources[c]) {
      const auto type = ColumnTypeOf(*batch.schema()->field(f)->type());
      wanted = wanted ? JoinColumnTypes(*wanted, type) : type;
    }
    if (const auto wider = lake::PromotionFor(live[c].type, *wanted)) {
      change.promote.emplace_back(live[c].name, *wider);
    }
  }
  if (change.promote.empty()) return Prepared::kReady;
  WEIR_ASSIGN_OR_RAISE(const auto evolved, table_->Evolve(change));
  if (evolved.status == lake::EvolveStatus::kTableChanged) return Prepared::kTableChanged;
  if (evolved.status == lake::EvolveStatus::kRefused) {
    for (const auto& [name, type] : change.promote) unpromotable_.insert(name);
    spdlog::warn(
        "dataset {}: {} (values of the column(s) are left null and counted as type_mismatch)",
        config_.name, evolved.reason);
  } else {
    spdlog::info("dataset {}: widened {} column(s) of {}", config_.name, change.promote.size(),
                 table_->name());
  }
  return Prepared::kReady;
}

Result<DatasetWriter::Prepared> DatasetWriter::EnsureTables(const arrow::RecordBatch& batch,
                                                            bool need_rejects,
                                                            FlushOutcome& outcome) {
  const arrow::Schema& schema = *batch.schema();
  if (!table_) WEIR_RETURN_NOT_OK(CreateTable(PlanColumns(schema, {}, refused_)));
  // Columns the table lacks are added before the data commit, in one schema change.
  plan_ = PlanColumns(schema, table_->columns(), refused_);
  if (!plan_.missing.empty()) {
    const size_t before = table_->columns().size();
    WEIR_ASSIGN_OR_RAISE(const auto added, AddColumns(plan_.missing));
    if (added == Prepared::kTableChanged) return added;
    if (table_->columns().size() > before) {
      spdlog::info("dataset {}: added {} column(s) to {}", config_.name,
                   table_->columns().size() - before, table_->name());
    }
    plan_ = PlanColumns(schema, table_->columns(), refused_);
    if (!plan_.missing.empty()) {
      spdlog::warn("dataset {}: column \"{}\" is missing from {} after adding it", config_.name,
                   plan_.missing.front().name, table_->name());
      return Prepared::kTableChanged;
    }
  }
  WEIR_ASSIGN_OR_RAISE(const auto promoted, PromoteColumns(batch));
  if (promoted == Prepared::kTableChanged) return promoted;
  plan_ = PlanColumns(schema, table_->columns(), refused_);
  for (const int field : plan_.refused) {
    const auto& values = *batch.column(field);
    outcome.fields_dropped["refused_by_catalog"] += values.length() - values.null_count();
  }
  if (need_rejects) WEIR_RETURN_NOT_OK(OpenRejectsTable());
  return Prepared::kReady;
}

Status DatasetWriter::OpenRejectsTable() {
  if (rejects_table_) return Status::OK();
  WEIR_ASSIGN_OR_RAISE(
      auto opened,
      catalog_->OpenTable(
          lake::TableSpec{config_.schema, config_.table + "_rejects", RejectsColumns(), {}, {}},
          lake::OpenMode::kOpenOrCreate));
  if (opened.status != lake::OpenStatus::kOpened) {
    return ClassifiedError(
        ErrorClass::kFatal, "ingest", "rejects_refused",
        fmt::format("creating {}.{}_rejects: {}", config_.schema, config_.table, opened.reason));
  }
  rejects_table_ = std::move(opened.table);
  return Status::OK();
}

Result<std::shared_ptr<arrow::RecordBatch>> DatasetWriter::ResolvedRows(
    const arrow::RecordBatch& batch, int64_t inserted_at_us, FlushOutcome& outcome) {
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
      if (!IsWritable(column.type)) {
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
  return arrow::RecordBatch::Make(schema, batch.num_rows(), arrays);
}

Result<std::shared_ptr<arrow::RecordBatch>> DatasetWriter::LiveRows(const arrow::RecordBatch& batch,
                                                                    int64_t inserted_at_us,
                                                                    FlushOutcome& outcome) {
  WEIR_ASSIGN_OR_RAISE(auto rows, ResolvedRows(batch, inserted_at_us, outcome));
  return SortedRows(std::move(rows), outcome);
}

Result<std::shared_ptr<arrow::RecordBatch>> DatasetWriter::SortedRows(
    std::shared_ptr<arrow::RecordBatch> rows, FlushOutcome& outcome) {
  // The pre-write sort, before the split: every file then holds its rows in order.
  WEIR_ASSIGN_OR_RAISE(auto sorted, SortRows(rows, config_.sort_keys));
  if (!sorted.skipped.empty()) {
    outcome.sort_skipped[sorted.skipped] += rows->num_rows();
    const std::string keys = fmt::format("{}", fmt::join(sorted.keys_at_fault, ","));
    if (sort_warned_.insert(sorted.skipped + "/" + keys).second) {
      spdlog::warn(
          "dataset {}: flush written unsorted: sort key(s) {} {} (counted in "
          "weir_sort_skipped_total{{reason=\"{}\"}}; warned once per key set)",
          config_.name, keys,
          sorted.skipped == "field_missing" ? "missing from the flush" : "of an unsortable type",
          sorted.skipped);
    }
  }
  return std::move(sorted.rows);
}

Result<DatasetWriter::WrittenFiles> DatasetWriter::WriteFiles(
    const SealedFlush& flush, const std::vector<RejectRecord>& rejects, int64_t inserted_at_us,
    const std::vector<bool>& tombstones, FlushOutcome& outcome) {
  WrittenFiles written;
  const auto& batch = *flush.batch;
  if (batch.num_rows() > 0) {
    WEIR_ASSIGN_OR_RAISE(auto rows, ResolvedRows(batch, inserted_at_us, outcome));
    if (!config_.upsert_key.empty()) {
      // The flush's keys (tombstones' included) in the live types, then its rows to insert.
      WEIR_ASSIGN_OR_RAISE(written.key_deletes, KeysOf(*rows, config_.upsert_key));
      if (std::find(tombstones.begin(), tombstones.end(), true) != tombstones.end()) {
        arrow::Int64Builder live_rows;
        for (size_t r = 0; r < tombstones.size(); ++r) {
          if (!tombstones[r]) WEIR_RETURN_NOT_OK(live_rows.Append(static_cast<int64_t>(r)));
        }
        WEIR_ASSIGN_OR_RAISE(auto index_array, live_rows.Finish());
        WEIR_ASSIGN_OR_RAISE(auto taken,
                             arrow::compute::Take(arrow::Datum(rows), arrow::Datum(index_array)));
        rows = taken.record_batch();
      }
    }
    written.rows = rows->num_rows();
    WEIR_ASSIGN_OR_RAISE(rows, SortedRows(std::move(rows), outcome));
    const auto schema = rows->schema();
    // One file per partition tuple, computed by the table with its format's transforms
    // (transforms of _inserted_at are the same for every row of a flush; identity keys on data
    // columns split the rows by value).
    std::vector<lake::PartitionGroup> groups;  // none when an upsert flush is all tombstones
    if (rows->num_rows() > 0) {
      WEIR_ASSIGN_OR_RAISE(groups, table_->Partition(*rows));
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
      // Files of the tuple rotate at flush.target_file_size, row groups streaming out as
      // they fill (files/rolling_parquet_writer.h).
      std::vector<std::string> relative_paths;
      files::RollingParquetWriter writer(table_->filesystem(), schema, config_.file,
                                         config_.target_file_size, [&] {
                                           relative_paths.push_back(table_->NewFilePath(values));
                                           return table_->DataDirectory() + relative_paths.back();
                                         });
      Status appended = writer.Append(*part);
      auto infos = appended.ok() ? writer.Finish() : Result<std::vector<files::FileInfo>>(appended);
      if (!infos.ok()) {
        // Nothing of this flush is referenced yet: remove what was written of it.
        writer.Abort();
        WrittenFiles partial = written;
        for (size_t f = 0; f < writer.finished().size(); ++f) {
          lake::DataFile file;
          file.info = writer.finished()[f];
          partial.data.push_back(std::move(file));
        }
        DeleteFiles(partial);
        return infos.status();
      }
      for (size_t f = 0; f < infos->size(); ++f) {
        lake::DataFile file;
        file.relative_path = relative_paths[f];
        file.partition_values = values;
        file.info = std::move((*infos)[f]);
        outcome.bytes_written += file.info.size_bytes;
        written.data.push_back(std::move(file));
      }
    }
  }
  if (!rejects.empty() && rejects_table_) {
    WEIR_ASSIGN_OR_RAISE(auto file, WriteRejectsFile(rejects, outcome));
    written.rejects.push_back(std::move(file));
  }
  return written;
}

Result<lake::DataFile> DatasetWriter::WriteRejectsFile(const std::vector<RejectRecord>& rejects,
                                                       FlushOutcome& outcome) {
  WEIR_ASSIGN_OR_RAISE(auto batch, RejectsBatch(rejects, rejects_table_->columns()));
  lake::DataFile file;
  file.relative_path = rejects_table_->NewFilePath({});
  WEIR_ASSIGN_OR_RAISE(auto writer, files::ParquetFileWriter::Create(
                                        rejects_table_->filesystem(),
                                        rejects_table_->DataDirectory() + file.relative_path,
                                        batch->schema(), config_.file));
  WEIR_RETURN_NOT_OK(writer->Append(*batch));
  WEIR_ASSIGN_OR_RAISE(file.info, writer->Finish());
  outcome.bytes_written += file.info.size_bytes;
  return file;
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

void DatasetWriter::ReloadTables() {
  table_.reset();
  rejects_table_.reset();
}

Result<DatasetWriter::Landing> DatasetWriter::CommitFiles(lake::Table& table,
                                                          const lake::CommitRequest& request,
                                                          Retrier& retrier, FlushOutcome& outcome,
                                                          bool& maybe_landed) {
  const std::string what = "dataset " + config_.name + ": commit to " + table.name();
  Retrier races(kConflictPolicy, std::stop_token{}, /*log_retries=*/false);
  while (true) {
    ++outcome.commit_attempts;
    auto committed = table.Commit(request);
    if (!committed.ok()) {
      // Nothing landed (the interface's promise for an error): back off and try again.
      if (ClassOf(committed.status()) != ErrorClass::kRetriable) return committed.status();
      WEIR_RETURN_NOT_OK(retrier.Wait(committed.status(), what));
      continue;
    }
    switch (committed->status) {
      case lake::CommitStatus::kCommitted:
      case lake::CommitStatus::kAlreadyCommitted:
        outcome.snapshot_id = committed->snapshot_id;
        outcome.rows_deleted = committed->rows_deleted;
        outcome.delete_files = committed->delete_files;
        outcome.keys_deleted = committed->keys_deleted;
        outcome.already_committed = committed->status == lake::CommitStatus::kAlreadyCommitted;
        return Landing::kLanded;
      case lake::CommitStatus::kFenced:
        return Landing::kFenced;
      case lake::CommitStatus::kConflict:
        ++outcome.conflicts;
        WEIR_RETURN_NOT_OK(races.Wait(Status::IOError(what, " lost ", races.retries() + 1,
                                                      " race(s) in a row: ", committed->reason),
                                      what));
        continue;
      case lake::CommitStatus::kTableChanged:
        spdlog::warn("dataset {}: {}; reloading the table and writing the flush again",
                     config_.name, committed->reason);
        return Landing::kRewrite;
      case lake::CommitStatus::kOutcomeUnknown: {
        ++outcome.unknown_outcomes;
        maybe_landed = true;
        spdlog::warn("dataset {}: outcome of the commit unknown ({}); reading it back",
                     config_.name, committed->reason);
        const Result<std::optional<int64_t>> found =
            Retry(retrier_policy_, stop_, what + " (reading back a commit of unknown outcome)",
                  [&] { return table.FindCommit(request); });
        WEIR_RETURN_NOT_OK(found.status());
        if (*found) {
          spdlog::info("dataset {}: the commit to {} had landed, in snapshot {}", config_.name,
                       table.name(), **found);
          outcome.snapshot_id = **found;
          outcome.already_committed = true;
          return Landing::kLanded;
        }
        // It did not land: the files are referenced by no snapshot; commit them again (the
        // ledger fences the retry if another writer moved the offsets meanwhile).
        maybe_landed = false;
        WEIR_RETURN_NOT_OK(retrier.Wait(Status::IOError(committed->reason), what));
        continue;
      }
    }
  }
}

Result<DatasetWriter::Landing> DatasetWriter::CommitRejectsFirst(const SealedFlush& flush,
                                                                 const std::string& writer,
                                                                 Retrier& retrier,
                                                                 FlushOutcome& outcome) {
  // Another writer committing rejects of these partitions between our read of the ledger and
  // our commit fences the commit; the ledger is then read again (a zombie and a new owner of a
  // partition race like this only briefly).
  constexpr int kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    std::set<std::string> topics;
    for (const auto& range : flush.offsets) topics.insert(range.topic);
    // The ledger reads and the rejects file go through the flush's retrier, as its commit
    // does: a catalog or storage outage is waited out within the one budget, never fatal.
    const std::string what = "dataset " + config_.name + ": rejects of " + rejects_table_->name();
    TopicLedgers ledger;
    for (const auto& topic : topics) {
      WEIR_ASSIGN_OR_RAISE(ledger[topic],
                           Retry(retrier, what, [&] { return rejects_table_->ReadLedger(topic); }));
    }
    RejectsCommitPlan plan = PlanRejectsCommit(flush.rejects, flush.offsets, ledger);
    if (plan.rejects.empty()) {
      spdlog::info("dataset {}: the flush's {} rejects are in {} already", config_.name,
                   flush.rejects.size(), rejects_table_->name());
      return Landing::kLanded;
    }
    // The rejects ledger moves from where it stands, below this flush's start: that gap is
    // accounted for only if the rows' ledger reached the flush's start (the flushes before it
    // landed, and their rejects with them). Otherwise the rows' commit is going to be fenced.
    TopicLedgers data_ledger;
    for (const auto& range : plan.needs_data_ledger) {
      if (!data_ledger.count(range.topic)) {
        WEIR_ASSIGN_OR_RAISE(data_ledger[range.topic],
                             Retry(retrier, what, [&] { return table_->ReadLedger(range.topic); }));
      }
      const auto& rows = data_ledger[range.topic];
      const auto next = rows.find(range.partition);
      if (next != rows.end() && next->second < range.start) {
        spdlog::warn(
            "dataset {}: {}[{}] has rows committed up to offset {} only, below this flush's "
            "start {}: not committing its rejects (the flush is fenced)",
            config_.name, range.topic, range.partition, next->second, range.start);
        return Landing::kFenced;
      }
    }
    WEIR_ASSIGN_OR_RAISE(lake::DataFile file, Retry(retrier, what, [&] {
                           return WriteRejectsFile(plan.rejects, outcome);
                         }));
    lake::CommitRequest request;
    request.files = {file};
    request.offsets = plan.offsets;
    request.writer = writer + "/rejects";
    request.message = fmt::format("weir dataset {} (rejects)", config_.name);
    bool maybe_landed = false;
    auto landing = CommitFiles(*rejects_table_, request, retrier, outcome, maybe_landed);
    if (landing.ok() && *landing == Landing::kLanded) {
      outcome.rejects = static_cast<int64_t>(plan.rejects.size());
      outcome.files += 1;
      if (plan.rejects.size() < flush.rejects.size()) {
        spdlog::info("dataset {}: {} of the flush's {} rejects were in {} already", config_.name,
                     flush.rejects.size() - plan.rejects.size(), flush.rejects.size(),
                     rejects_table_->name());
      }
      return Landing::kLanded;
    }
    if (!landing.ok() && maybe_landed) {
      spdlog::warn(
          "dataset {}: a rejects file of a commit of unknown outcome left for orphan "
          "cleanup",
          config_.name);
      return landing.status();
    }
    if (auto deleted = rejects_table_->filesystem()->DeleteFile(file.info.path); !deleted.ok()) {
      spdlog::warn("cannot delete orphan {}: {}", file.info.path, deleted.message());
    }
    if (!landing.ok() || *landing == Landing::kRewrite) return landing;
    spdlog::info(
        "dataset {}: another writer committed rejects of these partitions; reading "
        "the ledger of {} again",
        config_.name, rejects_table_->name());
  }
  return Landing::kFenced;
}

Result<FlushOutcome> DatasetWriter::Write(const SealedFlush& sealed) {
  // An upsert flush keeps the last row of each key (ingest/upsert_rows.h).
  SealedFlush upsert_flush;
  std::vector<bool> tombstones;
  int64_t superseded = 0;
  if (!config_.upsert_key.empty() && sealed.batch) {
    WEIR_ASSIGN_OR_RAISE(LastRows last, LastRowPerKey(sealed.batch, config_.upsert_key));
    upsert_flush = sealed;
    upsert_flush.batch = std::move(last.rows);
    tombstones = std::move(last.tombstones);
    superseded = last.superseded;
  }
  const SealedFlush& flush = config_.upsert_key.empty() || !sealed.batch ? sealed : upsert_flush;
  Retrier retrier(retrier_policy_, stop_, /*log_retries=*/true, on_retry_);
  const std::string what = "dataset " + config_.name;
  const bool with_rejects = config_.rejects_enabled && !flush.rejects.empty();
  int reloads = 0;
  while (true) {
    FlushOutcome outcome;
    outcome.reloads = reloads;
    const auto started = std::chrono::steady_clock::now();
    // The writer id is fixed per attempt at writing files: a commit retried with the same files
    // recognises its own landing after an unknown outcome.
    const std::string writer = writer_prefix_ + "/" + commit_ids_.Next().ToString();
    Status failed;
    outcome.upsert_superseded = superseded;
    auto prepared = EnsureTables(*flush.batch, with_rejects, outcome);
    if (prepared.ok() && *prepared == Prepared::kReady && !config_.upsert_key.empty() &&
        !table_->DeletesByKey()) {
      return ClassifiedError(ErrorClass::kFatal, "ingest", "upsert_unsupported",
                             fmt::format("dataset {}: upsert.key is set but {} cannot delete "
                                         "rows by key",
                                         config_.name, table_->name()));
    }
    // The rejects go in the rows' commit, or before it on their own.
    const bool rejects_apart = with_rejects && prepared.ok() && *prepared == Prepared::kReady &&
                               !table_->CommitsCompanion();
    if (rejects_apart) {
      auto landing = CommitRejectsFirst(flush, writer, retrier, outcome);
      if (!landing.ok()) {
        if (ClassOf(landing.status()) == ErrorClass::kRetriable) return landing.status();
        return WithContext(landing.status(), what);
      }
      if (*landing == Landing::kFenced) {
        outcome.fenced = true;
        return outcome;
      }
      if (*landing == Landing::kRewrite) {
        ReloadTables();
        ++reloads;
        WEIR_RETURN_NOT_OK(retrier.Wait(Status::IOError("the table changed"), what));
        continue;
      }
    }
    if (prepared.ok() && *prepared == Prepared::kReady) {
      static const std::vector<RejectRecord> kNone;
      auto written = WriteFiles(flush, with_rejects && !rejects_apart ? flush.rejects : kNone,
                                UnixMicros(Clock::System().Now()), tombstones, outcome);
      const auto wrote = std::chrono::steady_clock::now();
      outcome.write_time = std::chrono::duration_cast<std::chrono::milliseconds>(wrote - started);
      if (written.ok()) {
        lake::CommitRequest request;
        request.files = written->data;
        request.offsets = flush.offsets;
        request.writer = writer;
        request.message = fmt::format("weir dataset {}", config_.name);
        request.key_deletes = written->key_deletes;
        if (!written->rejects.empty()) {
          request.companion = rejects_table_.get();
          request.companion_files = written->rejects;
        }
        bool maybe_landed = false;
        auto landing = CommitFiles(*table_, request, retrier, outcome, maybe_landed);
        outcome.commit_time = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - wrote);
        const int64_t files = static_cast<int64_t>(written->data.size() + written->rejects.size());
        if (landing.ok() && *landing == Landing::kLanded) {
          outcome.files += files;
          for (const auto& file : written->data) outcome.file_sizes.push_back(file.info.size_bytes);
          outcome.rows = written->rows;
          if (!rejects_apart) {
            outcome.rejects = with_rejects ? static_cast<int64_t>(flush.rejects.size()) : 0;
          }
          return outcome;
        }
        if (landing.ok() && *landing == Landing::kFenced) {
          outcome.fenced = true;
          DeleteFiles(*written);  // maybe_landed is false: every unknown outcome was resolved
          outcome.orphaned_files = files;
          return outcome;
        }
        if (landing.ok()) {  // kRewrite: refused before anything was written
          DeleteFiles(*written);
          ReloadTables();
          ++reloads;
          WEIR_RETURN_NOT_OK(retrier.Wait(Status::IOError("the table changed"), what));
          continue;
        }
        if (maybe_landed) {
          // The outcome is still unknown: a snapshot may reference the files, so they stay;
          // the maintenance's orphan sweep removes them if none does.
          spdlog::warn(
              "dataset {}: {} file(s) of a commit of unknown outcome left for orphan "
              "cleanup",
              config_.name, files);
        } else {
          DeleteFiles(*written);  // no attempt landed: the files are referenced by nothing
        }
        // CommitFiles waited with `retrier` already (its errors name the dataset): final.
        if (ClassOf(landing.status()) == ErrorClass::kRetriable) return landing.status();
        return WithContext(landing.status(), what);
      }
      failed = written.status();
    } else if (prepared.ok()) {
      // The table changed under us: reload it and write the flush again.
      spdlog::warn("dataset {}: {} changed; reloading it", config_.name,
                   table_ ? table_->name() : config_.table);
      ReloadTables();
      ++reloads;
      failed = Status::IOError("the table changed");
    } else {
      failed = prepared.status();
    }
    if (ClassOf(failed) != ErrorClass::kRetriable) return WithContext(failed, what);
    WEIR_RETURN_NOT_OK(retrier.Wait(failed, what));
  }
}

}  // namespace weir::ingest
