// Pipeline::FlushLoop: a dataset's flush thread — cast the typed columns, filter, add the VARIANT
// companions, write and commit each sealed flush (or hand it to the routed writer), publish its
// counters once it has landed.
#include <arrow/memory_pool.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "ingest/filter_metrics.h"
#include "ingest/pipeline.h"
#include "ingest/pipeline_dataset.h"

namespace weir::ingest {
namespace {

void AddFiltered(const records::FilterOutcome& from, records::FilterOutcome* to) {
  for (const auto& [reason, n] : from.skipped) to->skipped[reason] += n;
  for (const auto& [value, n] : from.matched) to->matched[value] += n;
  to->invalid_values += from.invalid_values;
}

}  // namespace

void Pipeline::FlushLoop(Dataset& d) {
  const std::string& name = d.options.config.name;
  while (true) {
    SealedFlush flush;
    {
      std::unique_lock lock(d.mutex);
      const auto idle_start = SteadyClock::now();
      d.changed.wait(lock, [&] { return !d.queue.empty() || d.stop; });
      stage_times_.flush_idle.Increment(StageTimes::Seconds(SteadyClock::now() - idle_start));
      if (d.queue.empty()) return;  // stopping and nothing left
      flush = std::move(d.queue.front());
      d.queue.pop_front();
      d.busy = true;
    }
    if (flush.abort) {
      // The open streamed flush was abandoned (its records are re-read from the ledger).
      d.writer->AbortStream();
      d.streamed_filtered = {};
      {
        std::lock_guard lock(d.mutex);
        d.busy = false;
      }
      d.changed.notify_all();
      continue;
    }
    const auto cast_start = SteadyClock::now();
    records::FilterOutcome filtered;
    if (fatal().ok()) {
      auto staged = d.stages->Apply(std::move(flush.batch), &filtered);
      if (staged.ok()) {
        flush.batch = std::move(*staged);
      } else {
        SetFatal(staged.status());
      }
    }
    if (flush.part) {
      // A part of a streamed flush: into the open files now, committed with the flush's last.
      // The part's bytes stay in the budget (and count against the poll thread's lead) until
      // its encoding is done, on an encode lane when there are several (encode_lanes.h).
      const int64_t bytes = flush.bytes;
      auto released = [this, &d, bytes](SteadyClock::duration encoding) {
        stage_times_.lanes.Increment(StageTimes::Seconds(encoding));
        // Arrow's allocator (mimalloc) keeps freed pages for a while, and a part is the largest
        // free there is: given back now, RSS stays near what the pools hold (60 MiB less at
        // peak with two lanes in the reference benchmark, bench/README.md).
        arrow::default_memory_pool()->ReleaseUnused();
        inflight_bytes_ -= bytes;
        {
          std::lock_guard lock(d.mutex);
          d.queued_part_bytes -= bytes;
        }
        d.changed.notify_all();
      };
      if (fatal().ok()) {
        if (Status wrote = d.writer->WritePart(std::move(flush.batch), released); !wrote.ok()) {
          spdlog::error("dataset {}: {}", name, wrote.ToString());
          SetFatal(wrote);
        }
      } else {
        flush.batch.reset();
        released({});
      }
      AddFiltered(filtered, &d.streamed_filtered);
      stage_times_.encode.Increment(StageTimes::Seconds(SteadyClock::now() - cast_start));
      {
        std::lock_guard lock(d.mutex);
        d.busy = false;
      }
      d.changed.notify_all();
      continue;
    }
    AddFiltered(d.streamed_filtered, &filtered);
    d.streamed_filtered = {};
    stage_times_.encode.Increment(StageTimes::Seconds(SteadyClock::now() - cast_start));
    if (fatal().ok()) {
      progress_.FlushStarted(name);
      auto outcome = d.router                ? WriteRouted(d, flush)
                     : d.writer->streaming() ? d.writer->FinishStream(flush)
                                             : d.writer->Write(flush);
      if (outcome.ok()) {
        stage_times_.encode.Increment(StageTimes::Seconds(outcome->write_time));
        stage_times_.commit.Increment(StageTimes::Seconds(outcome->commit_time));
      }
      const bool landed = outcome.ok() && !outcome->fenced && !outcome->replay;
      if (!outcome.ok()) progress_.AttemptFailed(name, outcome.status());
      progress_.FlushEnded(name, landed);
      if (!outcome.ok()) {
        spdlog::error("dataset {}: {}", name, outcome.status().ToString());
        SetFatal(outcome.status());
      } else if (outcome->fenced) {
        d.fenced->Increment();
        d.orphaned->Increment(static_cast<double>(outcome->orphaned_files));
        spdlog::warn(
            "dataset {}: commit fenced (another writer committed these offsets); "
            "{} file(s) deleted, consumption restarts from the ledger",
            name, outcome->orphaned_files);
        restart_.store(true);
      } else if (outcome->replay) {
        spdlog::warn(
            "dataset {}: streamed flush given up and its files deleted; consumption restarts "
            "from the ledger",
            name);
        restart_.store(true);
      } else {
        PublishFilterOutcome(*metrics_, name, filtered);  // once per landed flush
        d.commits->Increment();
        d.written->Increment(static_cast<double>(outcome->rows));
        d.bytes_written->Increment(static_cast<double>(outcome->bytes_written));
        d.files_written->Increment(static_cast<double>(outcome->files));
        d.nulled->Increment(static_cast<double>(outcome->values_nulled));
        AddFieldCounts(name, m::kFieldsDropped, outcome->fields_dropped);
        AddFieldCounts(name, m::kFieldsRenamed, outcome->fields_renamed);
        AddFieldCounts(name, m::kSortSkipped, outcome->sort_skipped);
        if (const auto it = outcome->fields_renamed.find("case_variant");
            it != outcome->fields_renamed.end() && it->second > 0) {
          const auto suppressed =
              field_log_limiter_.Admit(name + "/case_variant", SteadyClock::now());
          if (suppressed) {
            spdlog::info(
                "dataset {}: {} value(s) of keys spelled differently from their column "
                "written into it (case_variant){}",
                name, it->second,
                *suppressed > 0 ? fmt::format(" ({} more such flush(es))", *suppressed) : "");
          }
        }
        d.retries->Increment(static_cast<double>(outcome->commit_attempts - 1));
        d.conflicts->Increment(static_cast<double>(outcome->conflicts));
        d.flush_seconds->Observe(static_cast<double>(outcome->write_time.count()) / 1000.0);
        d.commit_seconds->Observe(static_cast<double>(outcome->commit_time.count()) / 1000.0);
        if (d.status != nullptr) {
          d.status->Committed(
              {outcome->snapshot_id, outcome->rows, outcome->rejects, outcome->files,
               outcome->bytes_written, outcome->write_time.count(), outcome->commit_time.count()},
              outcome->file_sizes);
        }
        spdlog::info(
            "dataset {} committed snapshot {}: {} rows, {} rejects, {} file(s), {} bytes, "
            "write {} ms, commit {} ms{}",
            name, outcome->snapshot_id, outcome->rows, outcome->rejects, outcome->files,
            outcome->bytes_written, outcome->write_time.count(), outcome->commit_time.count(),
            d.options.config.upsert_key.empty() ? ""
            : outcome->keys_deleted > 0
                ? fmt::format(" (upsert: {} superseded in the flush, older rows of {} keys "
                              "deleted by {} equality delete file(s))",
                              outcome->upsert_superseded, outcome->keys_deleted,
                              outcome->delete_files)
                : fmt::format(" (upsert: {} superseded in the flush, {} older rows deleted by {} "
                              "{})",
                              outcome->upsert_superseded, outcome->rows_deleted,
                              outcome->delete_files,
                              d.options.config.upsert_deletion_vectors ? "deletion vector(s)"
                                                                       : "delete file(s)"));
        std::lock_guard lock(mutex_);
        for (const auto& range : flush.offsets) {
          committed_[{range.topic, range.partition}] = range.end;
          progress_.Committed(range.topic, range.partition, range.end);
        }
      }
    }
    inflight_bytes_ -= flush.bytes;
    {
      std::lock_guard lock(d.mutex);
      d.busy = false;
    }
    d.changed.notify_all();
  }
}

Result<FlushOutcome> Pipeline::WriteRouted(Dataset& d, const SealedFlush& flush) {
  WEIR_ASSIGN_OR_RAISE(RoutedOutcome routed, d.router->Write(flush));
  if (!routed.total.fenced) {
    const std::string& name = d.options.config.name;
    for (const auto& [table, rows] : routed.routed_rows) {
      metrics_
          ->Counter(m::kRecordsRouted,
                    {{std::string(m::kLabelDataset), name}, {std::string(m::kLabelTable), table}})
          .Increment(static_cast<double>(rows));
    }
    AddFieldCounts(name, m::kRouteFallback, routed.fallback_reasons);
  }
  return std::move(routed.total);
}

}  // namespace weir::ingest
