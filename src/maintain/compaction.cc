#include "maintain/compaction.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <arrow/array.h>
#include <arrow/table.h>
#include <parquet/arrow/reader.h>

#include "files/rolling_parquet_writer.h"
#include "maintain/equality_deletes.h"
#include "maintain/sorted_merge.h"

namespace weir::maintain {
namespace {

// What an input costs a run's memory: read whole up to 4 MiB (SortedMerge), else one batch,
// allowed 4 MiB.
constexpr int64_t kWholeReadLimit = int64_t{4} << 20;
int64_t MemoryCost(const lake::LakeFile& file) {
  return std::min(file.size_bytes, kWholeReadLimit);
}

void DeleteAll(arrow::fs::FileSystem& fs, const std::vector<std::string>& paths) {
  for (const auto& path : paths) {
    const Status deleted = fs.DeleteFile(path);
    if (!deleted.ok()) spdlog::warn("compaction: could not delete {}: {}", path, deleted.message());
  }
}

// The positions of `file` its position delete files delete, ascending and distinct, checked
// against the catalog's count (a disagreement is an error: never a guess at which rows remain).
Result<std::vector<int64_t>> DeletedPositions(lake::Table& lake_table, const lake::LakeFile& file) {
  arrow::fs::FileSystem& fs = *lake_table.filesystem();
  std::vector<int64_t> positions;
  for (const lake::PositionDeletes& deletes : file.deletes) {
    if (deletes.vector_offset >= 0) {  // a deletion vector: the format reads its blob
      WEIR_ASSIGN_OR_RAISE(const auto vector, lake_table.ReadDeletionVector(deletes));
      positions.insert(positions.end(), vector.begin(), vector.end());
      continue;
    }
    WEIR_ASSIGN_OR_RAISE(auto input, fs.OpenInputFile(deletes.path));
    parquet::arrow::FileReaderBuilder builder;
    if (Status opened = builder.Open(input); !opened.ok()) return WithContext(opened, deletes.path);
    std::unique_ptr<parquet::arrow::FileReader> reader;
    WEIR_RETURN_NOT_OK(builder.Build(&reader));
    std::shared_ptr<arrow::Schema> schema;
    WEIR_RETURN_NOT_OK(reader->GetSchema(&schema));
    const int pos = schema->GetFieldIndex("pos");
    const int path = schema->GetFieldIndex("file_path");
    if (pos < 0 || (path < 0 && !deletes.data_file_path.empty())) {
      return Status::Invalid("delete file ", deletes.path, " has no file_path and pos columns");
    }
    std::vector<int> wanted{pos};
    if (!deletes.data_file_path.empty()) wanted.push_back(path);
    WEIR_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Table> table, reader->ReadTable(wanted));
    if (table->num_rows() == 0) continue;
    WEIR_ASSIGN_OR_RAISE(table, table->CombineChunks());
    const auto* pos_array =
        dynamic_cast<const arrow::Int64Array*>(table->GetColumnByName("pos")->chunk(0).get());
    if (pos_array == nullptr) {
      return Status::Invalid("delete file ", deletes.path, ": pos is not a 64-bit integer");
    }
    const arrow::StringArray* path_array = nullptr;
    if (!deletes.data_file_path.empty()) {
      path_array = dynamic_cast<const arrow::StringArray*>(
          table->GetColumnByName("file_path")->chunk(0).get());
      if (path_array == nullptr) {
        return Status::Invalid("delete file ", deletes.path, ": file_path is not a string");
      }
    }
    for (int64_t r = 0; r < table->num_rows(); ++r) {
      if (path_array != nullptr && path_array->GetView(r) != deletes.data_file_path) continue;
      if (pos_array->IsNull(r)) return Status::Invalid("delete file ", deletes.path, ": null pos");
      positions.push_back(pos_array->Value(r));
    }
  }
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  if (static_cast<int64_t>(positions.size()) != file.deleted_rows ||
      (!positions.empty() && (positions.front() < 0 || positions.back() >= file.record_count))) {
    return Status::Invalid("the delete files of ", file.path, " delete ", positions.size(),
                           " distinct positions of its ", file.record_count,
                           " rows, the catalog says ", file.deleted_rows);
  }
  return positions;
}

struct RunOutput {
  std::vector<lake::DataFile> files;
  std::vector<std::string> paths;  // in the table's file system
  bool sorted = false;
  // Rows of the inputs left out by their equality delete files (and by no position delete).
  int64_t equality_deleted_rows = 0;
};

// Merges the run's inputs into new files of the target size; on any error nothing it wrote
// is left behind.
Result<RunOutput> WriteRun(lake::Table& table, const CompactionRun& run,
                           const CompactionOptions& options) {
  std::vector<MergeInput> inputs;
  const auto fs = table.filesystem();
  RunOutput out;
  EqualityDeletes equality(fs);
  for (const auto& file : run.inputs) {
    MergeInput input{file.path, {}};
    if (!file.deletes.empty()) {
      WEIR_ASSIGN_OR_RAISE(input.deleted, DeletedPositions(table, file));
    }
    if (!file.equality_deletes.empty()) {
      WEIR_ASSIGN_OR_RAISE(const auto by_value, equality.DeletedPositions(file));
      std::vector<int64_t> both;
      std::set_union(input.deleted.begin(), input.deleted.end(), by_value.begin(), by_value.end(),
                     std::back_inserter(both));
      out.equality_deleted_rows += static_cast<int64_t>(both.size() - input.deleted.size());
      input.deleted = std::move(both);
    }
    inputs.push_back(std::move(input));
  }
  WEIR_ASSIGN_OR_RAISE(auto merge,
                       SortedMerge::Open(fs, inputs, table.columns(),
                                         MergeOptions{options.sort_keys, options.batch_rows}));
  out.sorted = merge->sorted();
  std::vector<std::string> relative;
  files::RollingParquetWriter writer(fs, merge->schema(), options.file, options.target_file_bytes,
                                     [&] {
                                       relative.push_back(table.NewFilePath(run.partition_values));
                                       return table.DataDirectory() + relative.back();
                                     });
  // Even files, not full ones and a small remainder (files::RollingParquetWriter).
  writer.set_total_rows(run.input_rows - run.deleted_rows - out.equality_deleted_rows);
  const auto fail = [&](const Status& status) -> Status {
    writer.Abort();
    std::vector<std::string> written;
    for (size_t k = 0; k < writer.finished().size(); ++k) {
      written.push_back(table.DataDirectory() + relative[k]);
    }
    DeleteAll(*fs, written);
    return status;
  };
  while (true) {
    auto batch = merge->Next();
    if (!batch.ok()) return fail(batch.status());
    if (*batch == nullptr) break;
    if (Status appended = writer.Append(**batch); !appended.ok()) return fail(appended);
  }
  auto infos = writer.Finish();
  if (!infos.ok()) return fail(infos.status());
  if (merge->rows_read() != run.input_rows ||
      merge->rows_deleted() != run.deleted_rows + out.equality_deleted_rows) {
    return fail(Status::Invalid("the files to compact hold ", merge->rows_read(), " rows of which ",
                                merge->rows_deleted(), " deleted, the catalog says ",
                                run.input_rows, " and ", run.deleted_rows, " (and ",
                                out.equality_deleted_rows, " by equality deletes)"));
  }
  for (size_t k = 0; k < infos->size(); ++k) {
    out.paths.push_back(table.DataDirectory() + relative[k]);
    out.files.push_back(lake::DataFile{relative[k], (*infos)[k], run.partition_values});
  }
  return out;
}

#ifndef NDEBUG
// The race tests' pause (debug builds only): with WEIR_TEST_COMPACT_PAUSE naming a file, each
// run, its files written and its commit not yet tried, creates that file and waits (up to 5
// minutes) until the test deletes it, so a test can commit between the plan and the commit.
void PauseBeforeCommit() {
  const char* marker = std::getenv("WEIR_TEST_COMPACT_PAUSE");
  if (marker == nullptr || *marker == '\0') return;
  std::FILE* f = std::fopen(marker, "w");
  if (f == nullptr) return;
  std::fclose(f);
  spdlog::info("WEIR_TEST_COMPACT_PAUSE: waiting for {} to be deleted", marker);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (std::filesystem::exists(marker) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}
#else
void PauseBeforeCommit() {}
#endif

}  // namespace

std::vector<CompactionRun> PlanCompaction(const lake::TableInspection& inspection,
                                          const CompactionOptions& options) {
  const int64_t target = std::max<int64_t>(1, options.target_file_bytes);
  const int64_t small = options.small_file_bytes > 0 ? options.small_file_bytes : target / 8;
  const int64_t large = options.large_file_bytes > 0 ? options.large_file_bytes : target / 2;
  std::map<std::vector<std::optional<std::string>>, std::vector<lake::LakeFile>> partitions;
  for (const auto& file : inspection.live) {
    if (file.kind != lake::LakeFileKind::kData || !file.rewritable) continue;
    if (file.size_bytes >= large) continue;  // large: never rewritten
    partitions[file.partition_values].push_back(file);
  }
  std::vector<CompactionRun> runs;
  for (auto& [values, files] : partitions) {
    const auto smalls = std::count_if(files.begin(), files.end(),
                                      [&](const auto& f) { return f.size_bytes < small; });
    const int64_t mediums = static_cast<int64_t>(files.size()) - smalls;
    const bool with_medium = mediums >= options.min_medium_files;
    if (!with_medium && smalls < options.min_small_files) continue;
    std::vector<lake::LakeFile> candidates;
    for (const auto& f : files) {
      if (with_medium || f.size_bytes < small) candidates.push_back(f);
    }
    std::sort(candidates.begin(), candidates.end(),
              [](const auto& a, const auto& b) { return a.path < b.path; });
    CompactionRun run;
    int64_t cost = 0;
    const auto close_run = [&] {
      if (run.inputs.size() >= 2) runs.push_back(std::move(run));
      run = CompactionRun{};
      cost = 0;
    };
    for (const auto& f : candidates) {
      if (!run.inputs.empty() &&
          (static_cast<int64_t>(run.inputs.size()) >= options.max_merge_inputs ||
           cost + MemoryCost(f) > options.memory_budget_bytes / 2)) {
        close_run();
      }
      run.partition_values = values;
      run.inputs.push_back(f);
      run.input_bytes += f.size_bytes;
      run.input_rows += f.record_count;
      run.deleted_rows += f.deleted_rows;
      run.delete_files += static_cast<int64_t>(f.deletes.size());
      run.medium = run.medium || f.size_bytes >= small;
      cost += MemoryCost(f);
    }
    close_run();
  }
  return runs;
}

Result<CompactionReport> Compact(lake::Table& table, const CompactionOptions& options) {
  WEIR_ASSIGN_OR_RAISE(const lake::TableInspection inspection, table.Inspect());
  return Compact(table, inspection, options);
}

Result<CompactionReport> Compact(lake::Table& table, const lake::TableInspection& inspection,
                                 const CompactionOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  CompactionReport report;
  std::map<std::string, int64_t> reasons;  // deletes a rewrite cannot apply → files
  int64_t other = 0;
  for (const auto& file : inspection.live) {
    if (file.kind != lake::LakeFileKind::kData || file.rewritable) continue;
    ++report.files_not_rewritable;
    if (file.not_rewritable_reason.empty()) {
      ++other;
    } else {
      ++reasons[file.not_rewritable_reason];
    }
  }
  for (const auto& [reason, files] : reasons) {
    report.notes.push_back(fmt::format(
        "{} data file(s) left as they are: deletes apply to them that a rewrite does not apply "
        "({})",
        files, reason));
  }
  if (other > 0) {
    report.notes.push_back(fmt::format(
        "{} data file(s) left as they are: written under another partitioning, or mapping "
        "columns otherwise than by field id",
        other));
  }
  const std::vector<CompactionRun> runs = PlanCompaction(inspection, options);
  report.runs_planned = static_cast<int64_t>(runs.size());
  for (const auto& run : runs) {
    report.files_in += static_cast<int64_t>(run.inputs.size());
    report.bytes_in += run.input_bytes;
    report.rows += run.input_rows - run.deleted_rows;
    report.deleted_rows += run.deleted_rows;
  }
  if (options.dry_run) return report;
  const auto fs = table.filesystem();
  for (const auto& run : runs) {
    auto written = WriteRun(table, run, options);
    if (!written.ok()) return WithContext(written.status(), "compacting " + table.name());
    report.rows -= written->equality_deleted_rows;
    lake::RewriteRequest request;
    std::set<std::string> by_value;
    for (const auto& file : run.inputs) {
      request.remove.push_back(file.path);
      for (const auto& deletes : file.deletes) request.remove_deletes.push_back(deletes.path);
      for (const auto& deletes : file.equality_deletes) by_value.insert(deletes.path);
    }
    request.equality_deletes.assign(by_value.begin(), by_value.end());
    request.equality_deleted_rows = written->equality_deleted_rows;
    request.add = written->files;
    request.message =
        fmt::format("weir compaction: {} files → {}", run.inputs.size(), written->files.size());
    const auto committed = [&] {
      ++report.runs_committed;
      report.files_replaced += static_cast<int64_t>(run.inputs.size());
      report.bytes_replaced += run.input_bytes;
      report.deletes_applied += run.deleted_rows + written->equality_deleted_rows;
      report.equality_deletes_applied += written->equality_deleted_rows;
      report.delete_files_dropped += run.delete_files;
      report.files_out += static_cast<int64_t>(written->files.size());
      for (const auto& f : written->files) report.bytes_out += f.info.size_bytes;
    };
    PauseBeforeCommit();
    bool done = false;
    for (int attempt = 0; attempt < options.max_attempts && !done; ++attempt) {
      auto result = table.Rewrite(request);
      if (!result.ok()) {
        DeleteAll(*fs, written->paths);
        return WithContext(result.status(), "committing the compaction of " + table.name());
      }
      switch (result->status) {
        case lake::CommitStatus::kCommitted:
        case lake::CommitStatus::kAlreadyCommitted:
          done = true;
          committed();
          report.snapshots.push_back(result->snapshot_id);
          report.sorted = report.sorted && written->sorted;
          break;
        case lake::CommitStatus::kConflict:
          ++report.conflicts_retried;
          std::this_thread::sleep_for(std::chrono::milliseconds(std::min(1000, 20 << attempt)));
          break;
        case lake::CommitStatus::kOutcomeUnknown: {
          // Landed or not: the new files are live exactly when it did.
          WEIR_ASSIGN_OR_RAISE(const auto after, table.Inspect());
          // (A run whose every row was deleted wrote nothing: it landed when its first input
          // is gone.)
          const bool any_written = !written->paths.empty();
          const std::string& probe = any_written ? written->paths.front() : run.inputs.front().path;
          const bool live = std::any_of(after.live.begin(), after.live.end(),
                                        [&](const auto& f) { return f.path == probe; });
          const bool landed = any_written ? live : !live;
          if (landed) {
            done = true;
            committed();
          }
          break;
        }
        case lake::CommitStatus::kTableChanged:
        case lake::CommitStatus::kFenced:
          done = true;
          ++report.runs_given_up;
          report.notes.push_back(result->reason);
          DeleteAll(*fs, written->paths);
          spdlog::info("compaction of {}: run given up: {}", table.name(), result->reason);
          break;
      }
    }
    if (!done) {
      ++report.runs_given_up;
      report.notes.push_back(
          fmt::format("{} commit attempts lost to concurrent commits", options.max_attempts));
      DeleteAll(*fs, written->paths);
    }
  }
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

nlohmann::json CompactionToJson(const CompactionReport& r, bool dry_run) {
  return {{"dry_run", dry_run},
          {"runs_planned", r.runs_planned},
          {"runs_committed", r.runs_committed},
          {"runs_given_up", r.runs_given_up},
          {"conflicts_retried", r.conflicts_retried},
          {"files_in", r.files_in},
          {"bytes_in", r.bytes_in},
          {"rows", r.rows},
          {"deleted_rows", r.deleted_rows},
          {"deletes_applied", r.deletes_applied},
          {"delete_files_dropped", r.delete_files_dropped},
          {"equality_deletes_applied", r.equality_deletes_applied},
          {"files_not_rewritable", r.files_not_rewritable},
          {"files_replaced", r.files_replaced},
          {"bytes_replaced", r.bytes_replaced},
          {"files_out", r.files_out},
          {"bytes_out", r.bytes_out},
          {"sorted", r.sorted},
          {"seconds", r.seconds},
          {"snapshots", r.snapshots},
          {"notes", r.notes}};
}

}  // namespace weir::maintain
