#include "ingest/routed_writer.h"

#include <algorithm>
#include <optional>

#include <arrow/builder.h>
#include <arrow/compute/api_vector.h>
#include <arrow/datum.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "decode/field_names.h"

namespace weir::ingest {
namespace {

// The rows `rows` of `batch`, without the columns that are null in all of them (but those in
// `keep`).
Result<std::shared_ptr<arrow::RecordBatch>> RowsOf(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                   const std::vector<int64_t>& rows,
                                                   const std::set<std::string>& keep) {
  std::shared_ptr<arrow::RecordBatch> taken = batch;
  if (static_cast<int64_t>(rows.size()) != batch->num_rows()) {
    arrow::Int64Builder indices;
    WEIR_RETURN_NOT_OK(indices.AppendValues(rows));
    WEIR_ASSIGN_OR_RAISE(auto index_array, indices.Finish());
    WEIR_ASSIGN_OR_RAISE(auto datum,
                         arrow::compute::Take(arrow::Datum(batch), arrow::Datum(index_array)));
    taken = datum.record_batch();
  }
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<std::shared_ptr<arrow::Array>> arrays;
  for (int f = 0; f < taken->num_columns(); ++f) {
    const auto& array = taken->column(f);
    const auto& field = taken->schema()->field(f);
    if (array->null_count() == array->length() && !keep.count(decode::FoldName(field->name()))) {
      continue;
    }
    fields.push_back(field);
    arrays.push_back(array);
  }
  return arrow::RecordBatch::Make(arrow::schema(std::move(fields)), taken->num_rows(),
                                  std::move(arrays));
}

void Add(FlushOutcome& into, const FlushOutcome& from) {
  into.rows += from.rows;
  into.rejects += from.rejects;
  into.files += from.files;
  into.bytes_written += from.bytes_written;
  into.values_nulled += from.values_nulled;
  for (const auto& [k, v] : from.fields_dropped) into.fields_dropped[k] += v;
  for (const auto& [k, v] : from.fields_renamed) into.fields_renamed[k] += v;
  for (const auto& [k, v] : from.sort_skipped) into.sort_skipped[k] += v;
  into.orphaned_files += from.orphaned_files;
  into.commit_attempts += from.commit_attempts;
  into.conflicts += from.conflicts;
  into.unknown_outcomes += from.unknown_outcomes;
  into.reloads += from.reloads;
  into.write_time += from.write_time;
  into.commit_time += from.commit_time;
}

std::optional<int64_t> LedgerOf(const std::map<int32_t, int64_t>& ledger, int32_t partition) {
  const auto it = ledger.find(partition);
  if (it == ledger.end()) return std::nullopt;
  return it->second;
}

}  // namespace

RoutedWriter::RoutedWriter(DatasetConfig config, RouteConfig route, lake::Catalog* catalog,
                           std::stop_token stop)
    : config_(std::move(config)),
      route_(std::move(route)),
      catalog_(catalog),
      stop_(stop),
      home_(config_, catalog, stop) {}

void RoutedWriter::SetRetryObserver(std::function<void(const Status&)> observer) {
  on_retry_ = std::move(observer);
  home_.SetRetryObserver(on_retry_);
  for (auto& [table, writer] : routed_) writer->SetRetryObserver(on_retry_);
}

Result<DatasetWriter*> RoutedWriter::WriterFor(const std::string& table) {
  if (const auto it = routed_.find(table); it != routed_.end()) return it->second.get();
  if (over_cap_.count(table)) return nullptr;
  DatasetConfig config = config_;
  config.table = table;
  config.rejects_enabled = false;  // the dataset's rejects go with its own table
  if (static_cast<int>(routed_.size()) >= route_.max_tables) {
    // Beyond the cap only a table that exists is written to.
    WEIR_ASSIGN_OR_RAISE(
        auto opened, catalog_->OpenTable(DatasetWriter::Spec(config), lake::OpenMode::kOpenOnly));
    if (opened.status != lake::OpenStatus::kOpened) {
      over_cap_.insert(table);
      spdlog::warn(
          "dataset {}: {} routed tables open (route.max_tables): rows for the new table {} go "
          "to {} (weir_route_fallback_total{{reason=\"over_cap\"}})",
          config_.name, routed_.size(), table, config_.table);
      return nullptr;
    }
  }
  auto writer = std::make_unique<DatasetWriter>(std::move(config), catalog_, stop_);
  writer->SetRetryObserver(on_retry_);
  DatasetWriter* out = writer.get();
  routed_.emplace(table, std::move(writer));
  return out;
}

Result<RoutedWriter::Landed> RoutedWriter::CommitRouted(const std::string& table,
                                                        const SealedFlush& flush,
                                                        const std::vector<int64_t>& rows,
                                                        RoutedOutcome& outcome) {
  DatasetWriter& writer = *routed_.at(table);
  const std::string& topic = config_.topic;
  constexpr int kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    WEIR_ASSIGN_OR_RAISE(const auto ledger, writer.ReadLedger(topic));
    SealedFlush part;
    std::vector<int64_t> kept;
    for (const int64_t row : rows) {
      const auto next = LedgerOf(ledger, flush.row_partitions[row]);
      if (!next || flush.row_offsets[row] >= *next) kept.push_back(row);
    }
    if (kept.empty()) {
      spdlog::info("dataset {}: the flush's {} rows for {} are in it already", config_.name,
                   rows.size(), table);
      return Landed::kLanded;
    }
    std::map<int32_t, int64_t> home_ledger;
    bool home_read = false;
    for (const auto& range : flush.offsets) {
      const auto next = LedgerOf(ledger, range.partition);
      if (next && *next >= range.end) continue;
      part.offsets.push_back({range.topic, range.partition, next.value_or(range.start), range.end});
      if (next && *next < range.start) {
        // [R, s) is claimed too: only true when the dataset's ledger reached s.
        if (!home_read) {
          WEIR_ASSIGN_OR_RAISE(home_ledger, home_.ReadLedger(topic));
          home_read = true;
        }
        const auto home = LedgerOf(home_ledger, range.partition);
        if (home && *home < range.start) {
          spdlog::warn(
              "dataset {}: {}[{}] has rows committed up to offset {} only, below this flush's "
              "start {}: not committing to {} (the flush is fenced)",
              config_.name, range.topic, range.partition, *home, range.start, table);
          return Landed::kFenced;
        }
      }
    }
    WEIR_ASSIGN_OR_RAISE(part.batch, RowsOf(flush.batch, kept, route_.keep_columns));
    part.records = static_cast<int64_t>(kept.size());
    WEIR_ASSIGN_OR_RAISE(const FlushOutcome written, writer.Write(part));
    Add(outcome.total, written);
    if (!written.fenced) {
      outcome.routed_rows[table] += written.rows;
      if (kept.size() < rows.size()) {
        spdlog::info("dataset {}: {} of the flush's {} rows for {} were in it already",
                     config_.name, rows.size() - kept.size(), rows.size(), table);
      }
      return Landed::kLanded;
    }
    spdlog::info("dataset {}: another writer committed to {}; reading its ledger again",
                 config_.name, table);
  }
  return Landed::kFenced;
}

Result<RoutedOutcome> RoutedWriter::Write(const SealedFlush& flush) {
  RoutedOutcome outcome;
  if (flush.row_offsets.size() != static_cast<size_t>(flush.batch->num_rows()) ||
      flush.row_partitions.size() != flush.row_offsets.size()) {
    return Status::Invalid("dataset ", config_.name, ": a routed flush of ",
                           flush.batch->num_rows(), " rows carries ", flush.row_offsets.size(),
                           " row offsets");
  }
  records::RouteSplit split = records::SplitByRoute(*flush.batch, route_.rule);
  outcome.fallback_reasons = split.fallback_reasons;
  std::vector<int64_t> fallback = std::move(split.fallback);
  // Tables beyond the cap: their rows go to the fallback.
  std::vector<std::pair<std::string, std::vector<int64_t>>> tables;
  for (auto& [table, rows] : split.tables) {
    WEIR_ASSIGN_OR_RAISE(DatasetWriter * writer, WriterFor(table));
    if (writer == nullptr) {
      outcome.fallback_reasons["over_cap"] += static_cast<int64_t>(rows.size());
      fallback.insert(fallback.end(), rows.begin(), rows.end());
      continue;
    }
    tables.emplace_back(table, std::move(rows));
  }
  std::sort(fallback.begin(), fallback.end());
  // The routed tables first, each with its own ledger (in name order)...
  for (const auto& [table, rows] : tables) {
    WEIR_ASSIGN_OR_RAISE(const Landed landed, CommitRouted(table, flush, rows, outcome));
    if (landed == Landed::kFenced) {
      outcome.total.fenced = true;
      return outcome;
    }
  }
  // ...then the dataset's own table, with the rejects, moving the ledger a restart resumes at.
  SealedFlush home;
  WEIR_ASSIGN_OR_RAISE(home.batch, RowsOf(flush.batch, fallback, route_.keep_columns));
  home.rejects = flush.rejects;
  home.offsets = flush.offsets;
  home.bytes = flush.bytes;
  home.records = flush.records;
  WEIR_ASSIGN_OR_RAISE(const FlushOutcome written, home_.Write(home));
  const int64_t routed_files = outcome.total.files;
  Add(outcome.total, written);
  outcome.total.fenced = written.fenced;
  outcome.total.already_committed = written.already_committed;
  outcome.total.snapshot_id = written.snapshot_id;
  if (written.fenced) outcome.total.files = routed_files;
  return outcome;
}

}  // namespace weir::ingest
