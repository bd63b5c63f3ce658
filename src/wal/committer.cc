#include "wal/committer.h"

#include <algorithm>

#include <arrow/filesystem/localfs.h>
#include <arrow/io/interfaces.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "wal/fault.h"
#include "wal/segment_file.h"
#include "wal/segment_metadata.h"
#include "wal/wal_directory.h"

namespace weir::wal {
namespace {

// Copies the local file `from` to `to` on `fs` in 4 MiB pieces.
Status CopyToObject(const std::string& from, arrow::fs::FileSystem& fs, const std::string& to) {
  arrow::fs::LocalFileSystem local;
  WEIR_ASSIGN_OR_RAISE(auto input, local.OpenInputStream(from));
  if (fs.type_name() == "local") {
    // A local table directory appears with its first file (object stores have no directories).
    const size_t slash = to.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      WEIR_RETURN_NOT_OK(fs.CreateDir(to.substr(0, slash), /*recursive=*/true));
    }
  }
  WEIR_ASSIGN_OR_RAISE(auto output, fs.OpenOutputStream(to));
  while (true) {
    WEIR_ASSIGN_OR_RAISE(auto piece, input->Read(4 << 20));
    if (piece->size() == 0) break;
    const Status written = output->Write(piece);
    if (!written.ok()) {
      (void)output->Abort();
      return written;
    }
  }
  return output->Close();
}

}  // namespace

WalCommitter::WalCommitter(std::string directory, lake::Table* table, std::string writer_prefix,
                           const Clock& clock, uint64_t seed)
    : directory_(std::move(directory)),
      table_(table),
      writer_prefix_(std::move(writer_prefix)),
      ids_(clock, seed) {}

Result<UploadResult> WalCommitter::Upload() {
  UploadResult result;
  WEIR_ASSIGN_OR_RAISE(const auto entries, ListSegments(directory_));
  std::string data_dir = table_->DataDirectory();
  if (!data_dir.empty() && data_dir.back() != '/') data_dir += '/';
  for (const SegmentEntry& entry : entries) {
    if (!entry.name || entry.name->state != SegmentState::kReady) continue;
    if (uploaded_.count(entry.file_name)) continue;
    auto footer = ReadSegmentFooter(entry.path);
    if (!footer.ok()) return footer.status();  // a ready file is fsynced: unreadable is fatal
    lake::DataFile file;
    file.partition_values = footer->partition_values;
    file.info.rows = footer->rows;
    file.info.size_bytes = entry.size_bytes;
    file.info.footer_bytes = footer->footer_bytes;
    if (footer->rows > 0) {
      file.relative_path = ObjectPath(*table_, footer->partition_values, entry.name->id.ToString());
      file.info.path = data_dir + file.relative_path;
      const Status copied = CopyToObject(entry.path, *table_->filesystem(), file.info.path);
      if (!copied.ok()) {
        ++result.failed;
        if (result.first_error.ok()) {
          result.first_error = WithContext(copied, "uploading WAL file " + entry.path);
        }
        continue;
      }
      ++result.uploaded;
      result.bytes += entry.size_bytes;
    }
    uploaded_[entry.file_name] = std::move(file);
  }
  return result;
}

Status WalCommitter::DeleteLocal(const std::vector<ReadyGroup>& groups, int64_t* deleted) {
  bool any = false;
  for (const ReadyGroup& group : groups) {
    for (const SegmentEntry& file : group.files) {
      if (std::remove(file.path.c_str()) != 0 && errno != ENOENT) {
        return Status::IOError("deleting WAL file ", file.path, ": ", std::strerror(errno));
      }
      uploaded_.erase(file.file_name);
      ++*deleted;
      any = true;
    }
  }
  return any ? SyncPath(directory_) : Status::OK();
}

Result<CommitOnceResult> WalCommitter::CommitOnce(const PartitionOffsets& origin) {
  CommitOnceResult result;
  WEIR_ASSIGN_OR_RAISE(const auto entries, ListSegments(directory_));
  WEIR_ASSIGN_OR_RAISE(const auto groups, GroupReadyFiles(entries));
  PartitionOffsets ledger;
  std::map<std::string, bool> read;
  for (const ReadyGroup& group : groups) {
    if (read[group.topic]) continue;
    read[group.topic] = true;
    WEIR_ASSIGN_OR_RAISE(const auto of_topic, table_->ReadLedger(group.topic));
    for (const auto& [partition, next] : of_topic) ledger[{group.topic, partition}] = next;
  }
  const CommitPlan plan = PlanCommit(groups, ledger, origin);
  if (!plan.conflicting.empty()) {
    const ReadyGroup& bad = plan.conflicting.front();
    return ClassifiedError(ErrorClass::kFatal, "wal", "ledger_inside_range",
                           "the ledger of " + bad.topic + "[" + std::to_string(bad.partition) +
                               "] stands inside the range of WAL file " + bad.files.front().path);
  }
  WEIR_RETURN_NOT_OK(DeleteLocal(plan.landed, &result.deleted_local));
  result.waiting_groups = static_cast<int64_t>(plan.waiting.size());

  // The chain's prefix whose files are all uploaded: a partition's chain stops at its first
  // group with a file still to upload.
  lake::CommitRequest request;
  std::vector<ReadyGroup> committing;
  std::map<std::pair<std::string, int32_t>, bool> stopped;
  for (const ReadyGroup& group : plan.commit) {
    const auto key = std::pair{group.topic, group.partition};
    bool ready = !stopped[key];
    for (const SegmentEntry& file : group.files) ready = ready && uploaded_.count(file.file_name);
    if (!ready) {
      stopped[key] = true;
      ++result.waiting_groups;
      continue;
    }
    committing.push_back(group);
    if (!request.offsets.empty() && request.offsets.back().topic == group.topic &&
        request.offsets.back().partition == group.partition) {
      request.offsets.back().end = group.end + 1;
    } else {
      request.offsets.push_back(
          lake::OffsetRange{group.topic, group.partition, group.start, group.end + 1});
    }
    for (const SegmentEntry& file : group.files) {
      const lake::DataFile& data = uploaded_.at(file.file_name);
      if (data.info.rows == 0) continue;  // a range without rows: only the ledger moves
      request.files.push_back(data);
      result.rows += data.info.rows;
    }
  }
  if (committing.empty()) return result;
  const auto same_ranges = [](const std::vector<lake::OffsetRange>& a,
                              const std::vector<lake::OffsetRange>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
      return x.topic == y.topic && x.partition == y.partition && x.start == y.start &&
             x.end == y.end;
    });
  };
  if (unresolved_ && same_ranges(unresolved_->offsets, request.offsets)) {
    request.writer = unresolved_->writer;  // the same commit again: its landing is found
  } else {
    request.writer = writer_prefix_ + "/" + ids_.Next().ToString();
  }
  request.message = "weir WAL commit";
  result.files = static_cast<int64_t>(request.files.size());
  result.ranges = request.offsets;
  WEIR_ASSIGN_OR_RAISE(const lake::CommitResult outcome, table_->Commit(request));
  result.status = outcome.status;
  bool landed = outcome.status == lake::CommitStatus::kCommitted ||
                outcome.status == lake::CommitStatus::kAlreadyCommitted;
  if (outcome.status == lake::CommitStatus::kOutcomeUnknown) {
    unresolved_ = request;
    WEIR_ASSIGN_OR_RAISE(const auto found, table_->FindCommit(request));
    landed = found.has_value();
  }
  if (outcome.status == lake::CommitStatus::kTableChanged) {
    return ClassifiedError(
        ErrorClass::kFatal, "wal", "table_changed",
        "table " + table_->name() + " changed under the WAL commit: " + outcome.reason);
  }
  if (!landed) return result;  // fenced, conflict, or not landed: the next interval re-plans
  unresolved_.reset();
  result.committed = true;
  FaultPoint("exit_after_commit");
  WEIR_RETURN_NOT_OK(DeleteLocal(committing, &result.deleted_local));
  return result;
}

}  // namespace weir::wal
