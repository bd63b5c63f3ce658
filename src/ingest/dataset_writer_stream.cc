// DatasetWriter's streamed flush: parts written into open per-tuple files as the poll thread
// seals them, one commit at the end (dataset_writer.h, "The streamed flush").
#include <algorithm>

#include <arrow/array/util.h>
#include <arrow/builder.h>
#include <arrow/compute/api_vector.h>
#include <arrow/datum.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "ingest/dataset_writer.h"

namespace weir::ingest {

DatasetWriter::~DatasetWriter() { AbortStream(); }

namespace {

// The finished files of `tuple`'s writer as data files (in the order it wrote them).
void CollectFinished(std::vector<lake::PartitionValue> values,
                     const std::vector<std::string>& relative_paths,
                     const std::vector<files::FileInfo>& infos, std::vector<lake::DataFile>* out) {
  for (size_t f = 0; f < infos.size(); ++f) {
    lake::DataFile file;
    file.relative_path = f < relative_paths.size() ? relative_paths[f] : std::string();
    file.partition_values = values;
    file.info = infos[f];
    out->push_back(std::move(file));
  }
}

// `rows` in the columns of `schema` (an open file's), those it lacks as nulls; null when `rows`
// has a column `schema` does not, or one of another type (the file must then be rotated).
Result<std::shared_ptr<arrow::RecordBatch>> Conform(const std::shared_ptr<arrow::RecordBatch>& rows,
                                                    const arrow::Schema& schema) {
  const arrow::Schema& have = *rows->schema();
  for (const auto& field : have.fields()) {
    const auto other = schema.GetFieldByName(field->name());
    if (!other || !other->Equals(*field, /*check_metadata=*/true)) return nullptr;
  }
  std::vector<std::shared_ptr<arrow::Array>> columns;
  for (const auto& field : schema.fields()) {
    if (const auto column = rows->GetColumnByName(field->name())) {
      columns.push_back(column);
    } else {
      WEIR_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(field->type(), rows->num_rows()));
      columns.push_back(std::move(nulls));
    }
  }
  return arrow::RecordBatch::Make(std::make_shared<arrow::Schema>(schema), rows->num_rows(),
                                  std::move(columns));
}

}  // namespace

void DatasetWriter::AbortStream() {
  if (!stream_) return;
  // The lanes' jobs end first (their errors do not matter: every file goes).
  if (lanes_) (void)lanes_->Drain();
  Stream& s = *stream_;
  WrittenFiles doomed;
  for (auto& lane : s.lanes) {
    std::move(lane.finished.begin(), lane.finished.end(), std::back_inserter(doomed.data));
    for (auto& tuple : lane.open) {
      tuple->writer->Abort();  // the open file: upload aborted, local file deleted
      CollectFinished(tuple->values, tuple->relative_paths, tuple->writer->finished(),
                      &doomed.data);
    }
  }
  s.lanes.clear();
  if (table_) DeleteFiles(doomed);  // nothing references them: no commit carried them
  stream_.reset();
}

Status DatasetWriter::WritePart(std::shared_ptr<arrow::RecordBatch> part, Released released) {
  if (!stream_) {
    stream_ = std::make_unique<Stream>();
    // One _inserted_at and one writer id for the whole flush, as for an unstreamed one.
    stream_->inserted_at_us = UnixMicros(Clock::System().Now());
    stream_->writer_id = writer_prefix_ + "/" + commit_ids_.Next().ToString();
    if (!lanes_) {
      lanes_ =
          std::make_unique<EncodeLanes>(static_cast<size_t>(std::max(config_.encode_lanes, 1)));
    }
    stream_->lanes.resize(lanes_->size());
  }
  Stream& s = *stream_;
  if (!s.failed.ok() || !part || part->num_rows() == 0) {
    part.reset();
    if (released) released({});
    return Status::OK();
  }
  Status appended = AppendPart(std::move(part), std::move(released));
  if (appended.ok()) return appended;
  if (ClassOf(appended) != ErrorClass::kRetriable) return appended;  // final: the caller fails
  // A retriable failure cannot be retried here (the earlier parts are in the open files, the
  // failed one half in): the flush is given up and read again from the ledger.
  spdlog::warn(
      "dataset {}: a part of the streamed flush could not be written ({}); the flush "
      "is dropped and its records re-read from the ledger",
      config_.name, appended.ToString());
  const Status why = appended;
  AbortStream();
  ReloadTables();  // reopened by the next flush (the table may have changed under this one)
  stream_ = std::make_unique<Stream>();
  stream_->failed = why;
  return Status::OK();
}

Status DatasetWriter::AppendPart(std::shared_ptr<arrow::RecordBatch> part, Released released) {
  Stream& s = *stream_;
  // Called on every path that does not hand the part to a lane: nothing holds it after this.
  auto release = [&] {
    part.reset();
    if (released) std::exchange(released, nullptr)({});
  };
  if (lanes_->Failed()) {
    release();
    return lanes_->Drain();  // a lane's part failed: this flush is given up like that part
  }
  Retrier retrier(retrier_policy_, stop_, /*log_retries=*/true, on_retry_);
  while (true) {
    FlushOutcome scratch;  // EnsureTables' counters are taken once it succeeded
    auto prepared = [&] {
      // The table may change (columns added or widened) while lanes name new files after it.
      std::lock_guard lock(table_mutex_);
      return EnsureTables(*part, /*need_rejects=*/false, scratch);
    }();
    if (prepared.ok() && *prepared == Prepared::kReady) {
      for (const auto& [reason, n] : scratch.fields_dropped) s.outcome.fields_dropped[reason] += n;
      break;
    }
    Status failed = prepared.ok() ? Status::IOError("the table changed") : prepared.status();
    if (prepared.ok()) {
      // Files already written carry the old table's column ids: only an empty flush may go on
      // (otherwise WritePart deletes them, then reloads).
      if (s.rows > 0) {
        release();
        return failed;
      }
      ReloadTables();
    }
    if (ClassOf(failed) != ErrorClass::kRetriable) {
      release();
      return failed;
    }
    if (Status waited = retrier.Wait(failed, "dataset " + config_.name); !waited.ok()) {
      release();
      return waited;
    }
  }
  auto prepared = PrepareTuples(*part, s);
  if (!prepared.ok()) {
    release();
    return prepared.status();
  }
  s.rows += part->num_rows();
  part.reset();  // the tuples' rows hold what they need of it
  // The lowest idle lane: lane 0 while the flush keeps up, the others only while parts queue.
  const size_t lane = lanes_->Acquire();
  lanes_->Run(lane, [this, target = &s.lanes[lane], tuples = std::move(*prepared),
                     released = std::move(released), on_lane = lanes_->size() > 1]() mutable {
    const auto started = std::chrono::steady_clock::now();
    Status appended = AppendToLane(*target, tuples);
    tuples.clear();  // the part's memory is free before the pipeline hears of it
    const auto encoding = std::chrono::steady_clock::now() - started;
    if (released) released(on_lane ? encoding : std::chrono::steady_clock::duration{});
    return appended;
  });
  // With one lane the part was written here and now: its failure is this call's, as before.
  return lanes_->size() == 1 && lanes_->Failed() ? lanes_->Drain() : Status::OK();
}

Result<DatasetWriter::TupleRows> DatasetWriter::PrepareTuples(const arrow::RecordBatch& part,
                                                              Stream& s) {
  WEIR_ASSIGN_OR_RAISE(auto rows, LiveRows(part, s.inserted_at_us, s.outcome));
  WEIR_ASSIGN_OR_RAISE(const auto groups, table_->Partition(*rows));
  TupleRows tuples;
  for (const auto& [values, row_ids] : groups) {
    std::shared_ptr<arrow::RecordBatch> tuple_rows = rows;
    if (groups.size() > 1) {
      arrow::Int64Builder indices;
      WEIR_RETURN_NOT_OK(indices.AppendValues(row_ids));
      WEIR_ASSIGN_OR_RAISE(auto index_array, indices.Finish());
      WEIR_ASSIGN_OR_RAISE(auto taken,
                           arrow::compute::Take(arrow::Datum(rows), arrow::Datum(index_array)));
      tuple_rows = taken.record_batch();
    }
    tuples.emplace_back(values, std::move(tuple_rows));
  }
  return tuples;
}

Status DatasetWriter::AppendToLane(Stream::Lane& lane, const TupleRows& tuples) {
  for (const auto& [values, rows] : tuples) {
    std::shared_ptr<arrow::RecordBatch> tuple_rows = rows;
    auto open = std::find_if(lane.open.begin(), lane.open.end(),
                             [&](const auto& t) { return t->values == values; });
    if (open != lane.open.end() && !(*open)->writer->schema()->Equals(*rows->schema(), true)) {
      // A part lacking some of the open file's columns (values no record of it carried) is
      // written with them null; one with a column the file lacks (new, or widened) finishes
      // the file, and the tuple goes on in a new one.
      WEIR_ASSIGN_OR_RAISE(auto conformed, Conform(tuple_rows, *(*open)->writer->schema()));
      if (conformed) {
        tuple_rows = std::move(conformed);
      } else {
        WEIR_ASSIGN_OR_RAISE(const auto infos, (*open)->writer->Finish());
        CollectFinished((*open)->values, (*open)->relative_paths, infos, &lane.finished);
        lane.open.erase(open);
        open = lane.open.end();
      }
    }
    if (open == lane.open.end()) {
      auto tuple = std::make_unique<Stream::Tuple>();
      tuple->values = values;
      Stream::Tuple* t = tuple.get();
      tuple->writer = std::make_unique<files::RollingParquetWriter>(
          table_->filesystem(), rows->schema(), config_.file, config_.target_file_size, [this, t] {
            std::lock_guard lock(table_mutex_);  // lanes rotate files at once
            t->relative_paths.push_back(table_->NewFilePath(t->values));
            return table_->DataDirectory() + t->relative_paths.back();
          });
      lane.open.push_back(std::move(tuple));
      open = lane.open.end() - 1;
    }
    WEIR_RETURN_NOT_OK((*open)->writer->Append(*tuple_rows));
  }
  return Status::OK();
}

Result<FlushOutcome> DatasetWriter::Replay(const Status& why) {
  AbortStream();
  ReloadTables();  // the table may have changed: the next flush reopens it
  if (++replays_ > config_.commit_max_attempts) {
    replays_ = 0;
    return WithContext(why, fmt::format("dataset {}: streamed flush given up {} times in a row",
                                        config_.name, config_.commit_max_attempts));
  }
  // A short pause, longer with each replay in a row, so an outage is not met by a busy loop.
  if (!WaitFor(std::chrono::milliseconds(200) * replays_, stop_)) {
    return WithContext(why, "dataset " + config_.name + " (stopping)");
  }
  FlushOutcome outcome;
  outcome.replay = true;
  return outcome;
}

Result<FlushOutcome> DatasetWriter::FinishStream(const SealedFlush& last) {
  // No part was streamed: the flush is written whole (what Write does, rewrites included).
  if (!stream_) return Write(last);
  if (last.batch && last.batch->num_rows() > 0) WEIR_RETURN_NOT_OK(WritePart(last.batch));
  if (!stream_->failed.ok()) return Replay(stream_->failed);
  const std::string what = "dataset " + config_.name;
  const auto started = std::chrono::steady_clock::now();
  if (Status encoded = lanes_->Drain(); !encoded.ok()) {
    // A part failed on its lane: as WritePart does for one that fails at once.
    if (ClassOf(encoded) == ErrorClass::kRetriable) return Replay(encoded);
    AbortStream();
    return WithContext(encoded, what);
  }
  Stream& s = *stream_;
  if (s.rows == 0) {
    // Every part was empty (filtered out): nothing streamed, the ranges commit as Write does.
    stream_.reset();
    SealedFlush empty = last;
    if (empty.batch) empty.batch = empty.batch->Slice(0, 0);
    return Write(empty);
  }
  for (auto& lane : s.lanes) {
    for (auto& tuple : lane.open) {
      auto infos = tuple->writer->Finish();
      if (!infos.ok()) {
        if (ClassOf(infos.status()) == ErrorClass::kRetriable) return Replay(infos.status());
        const Status failed = infos.status();
        AbortStream();
        return WithContext(failed, what);
      }
      CollectFinished(tuple->values, tuple->relative_paths, *infos, &lane.finished);
    }
    lane.open.clear();
  }
  FlushOutcome outcome = s.outcome;
  WrittenFiles written;
  // AbortStream deletes the lanes' finished files on every path below but landing.
  for (const auto& lane : s.lanes) {
    written.data.insert(written.data.end(), lane.finished.begin(), lane.finished.end());
  }
  const bool with_rejects = config_.rejects_enabled && !last.rejects.empty();
  Retrier retrier(retrier_policy_, stop_, /*log_retries=*/true, on_retry_);
  if (with_rejects) {
    Status opened = OpenRejectsTable();
    while (!opened.ok() && ClassOf(opened) == ErrorClass::kRetriable) {
      WEIR_RETURN_NOT_OK(retrier.Wait(opened, what));
      opened = OpenRejectsTable();
    }
    if (!opened.ok()) {
      AbortStream();
      return WithContext(opened, what);
    }
  }
  const bool rejects_apart = with_rejects && !table_->CommitsCompanion();
  if (rejects_apart) {
    auto landing = CommitRejectsFirst(last, s.writer_id, retrier, outcome);
    if (!landing.ok()) {
      AbortStream();
      return ClassOf(landing.status()) == ErrorClass::kRetriable
                 ? landing.status()
                 : WithContext(landing.status(), what);
    }
    if (*landing == Landing::kFenced) {
      outcome.orphaned_files = static_cast<int64_t>(written.data.size());
      AbortStream();
      outcome.fenced = true;
      return outcome;
    }
    if (*landing == Landing::kRewrite) return Replay(Status::IOError("the table changed"));
  } else if (with_rejects) {
    auto file = WriteRejectsFile(last.rejects, outcome);
    if (!file.ok()) {
      if (ClassOf(file.status()) == ErrorClass::kRetriable) return Replay(file.status());
      AbortStream();
      return WithContext(file.status(), what);
    }
    written.rejects.push_back(std::move(*file));
  }
  for (const auto& file : written.data) outcome.bytes_written += file.info.size_bytes;
  const auto wrote = std::chrono::steady_clock::now();
  outcome.write_time = std::chrono::duration_cast<std::chrono::milliseconds>(wrote - started);
  lake::CommitRequest request;
  request.files = written.data;
  request.offsets = last.offsets;
  request.writer = s.writer_id;
  request.message = fmt::format("weir dataset {}", config_.name);
  if (!written.rejects.empty()) {
    request.companion = rejects_table_.get();
    request.companion_files = written.rejects;
  }
  bool maybe_landed = false;
  auto landing = CommitFiles(*table_, request, retrier, outcome, maybe_landed);
  outcome.commit_time = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - wrote);
  const int64_t files = static_cast<int64_t>(written.data.size() + written.rejects.size());
  const int64_t rows = s.rows;
  if (landing.ok() && *landing == Landing::kLanded) {
    stream_.reset();  // landed: the files are the table's now
    replays_ = 0;
    outcome.files += files;
    for (const auto& file : written.data) outcome.file_sizes.push_back(file.info.size_bytes);
    outcome.rows = rows;
    if (!rejects_apart)
      outcome.rejects = with_rejects ? static_cast<int64_t>(last.rejects.size()) : 0;
    return outcome;
  }
  if (!landing.ok() && maybe_landed) {
    // Still unknown: a snapshot may reference the files, so they stay (the orphan sweep's).
    spdlog::warn("dataset {}: {} file(s) of a commit of unknown outcome left for orphan cleanup",
                 config_.name, files);
    stream_.reset();
    return ClassOf(landing.status()) == ErrorClass::kRetriable
               ? landing.status()
               : WithContext(landing.status(), what);
  }
  DeleteFiles(WrittenFiles{{}, written.rejects, nullptr, 0});
  if (landing.ok() && *landing == Landing::kFenced) {
    AbortStream();
    outcome.fenced = true;
    outcome.orphaned_files = files;
    return outcome;
  }
  if (landing.ok()) return Replay(Status::IOError("the table changed"));  // kRewrite
  AbortStream();
  return ClassOf(landing.status()) == ErrorClass::kRetriable ? landing.status()
                                                             : WithContext(landing.status(), what);
}

}  // namespace weir::ingest
