#include "wal/committer.h"

#include <algorithm>

#include <arrow/filesystem/localfs.h>
#include <arrow/io/interfaces.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "wal/bloom_sidecar.h"
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

// Writes the bloom-filter sidecar of the local file `from`, uploaded as `object`.
Status WriteSidecar(const std::string& from, const std::vector<std::string>& columns,
                    arrow::fs::FileSystem& fs, const std::string& object, int64_t size) {
  const size_t slash = object.rfind('/');
  const std::string name = slash == std::string::npos ? object : object.substr(slash + 1);
  WEIR_ASSIGN_OR_RAISE(const BloomSidecar sidecar, ReadBloomSidecar(from, columns, name, size));
  WEIR_ASSIGN_OR_RAISE(const auto bytes, EncodeBloomSidecar(sidecar));
  WEIR_ASSIGN_OR_RAISE(auto output, fs.OpenOutputStream(BloomSidecarPath(object)));
  const Status written = output->Write(bytes);
  if (!written.ok()) {
    (void)output->Abort();
    return written;
  }
  return output->Close();
}

}  // namespace

WalCommitter::WalCommitter(std::string directory, lake::Table* table, std::string writer_prefix,
                           const Clock& clock, uint64_t seed, RejectsTableOpener rejects)
    : directory_(std::move(directory)),
      table_(table),
      writer_prefix_(std::move(writer_prefix)),
      ids_(clock, seed),
      open_rejects_(std::move(rejects)) {}

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
      lake::Table* target = table_;
      std::string target_dir = data_dir;
      if (footer->rejects) {
        if (!open_rejects_) {
          return ClassifiedError(
              ErrorClass::kFatal, "wal", "rejects_segment",
              "WAL file " + entry.path + " holds rejects, but the dataset keeps no rejects table");
        }
        auto rejects = open_rejects_();
        if (!rejects.ok()) {
          ++result.failed;
          if (result.first_error.ok()) {
            result.first_error = WithContext(rejects.status(), "opening the rejects table");
          }
          continue;
        }
        target = *rejects;
        target_dir = target->DataDirectory();
        if (!target_dir.empty() && target_dir.back() != '/') target_dir += '/';
      }
      file.relative_path = ObjectPath(*target, footer->partition_values, entry.name->id.ToString());
      file.info.path = target_dir + file.relative_path;
      Status copied = CopyToObject(entry.path, *target->filesystem(), file.info.path);
      if (copied.ok() && !footer->rejects && !sidecar_columns_.empty()) {
        copied = WriteSidecar(entry.path, sidecar_columns_, *target->filesystem(), file.info.path,
                              entry.size_bytes);
        if (!copied.ok() && ClassOf(copied) == ErrorClass::kFatal) {
          return WithContext(copied, "writing the bloom sidecar of WAL file " + entry.path);
        }
      }
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
    if (footer->rejects) rejects_files_.insert(entry.file_name);
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
      rejects_files_.erase(file.file_name);
      ++*deleted;
      any = true;
    }
  }
  return any ? SyncPath(directory_) : Status::OK();
}

Result<CommitOnceResult> WalCommitter::CommitOnce(const PartitionOffsets& origin) {
  CommitOnceResult result;
  std::unique_lock<std::mutex> listing;
  if (listing_ != nullptr) listing = std::unique_lock(*listing_);
  auto listed = ListSegments(directory_);
  if (listing) listing.unlock();
  WEIR_ASSIGN_OR_RAISE(const auto entries, std::move(listed));
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
      if (rejects_files_.count(file.file_name)) {
        request.companion_files.push_back(data);
        continue;
      }
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
  if (!request.companion_files.empty()) {
    WEIR_ASSIGN_OR_RAISE(lake::Table * rejects, open_rejects_());
    if (table_->CommitsCompanion()) {
      request.companion = rejects;
      for (const auto& file : request.companion_files) result.rejects += file.info.rows;
    } else {
      WEIR_ASSIGN_OR_RAISE(const bool rejects_landed,
                           CommitRejectsFirst(committing, request, &result));
      if (!rejects_landed) return result;
      request.companion_files.clear();
    }
  }
  result.files = static_cast<int64_t>(request.files.size() + request.companion_files.size());
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

Result<bool> WalCommitter::CommitRejectsFirst(const std::vector<ReadyGroup>& committing,
                                              const lake::CommitRequest& rows,
                                              CommitOnceResult* result) {
  WEIR_ASSIGN_OR_RAISE(lake::Table * rejects, open_rejects_());
  std::map<std::string, std::map<int32_t, int64_t>> ledger;  // R, the rejects table's own
  for (const auto& range : rows.offsets) {
    if (!ledger.count(range.topic)) {
      WEIR_ASSIGN_OR_RAISE(ledger[range.topic], rejects->ReadLedger(range.topic));
    }
  }
  lake::CommitRequest request;
  int64_t count = 0;
  for (const auto& range : rows.offsets) {
    const auto& of_topic = ledger[range.topic];
    const auto at = of_topic.find(range.partition);
    const std::optional<int64_t> r =
        at == of_topic.end() ? std::nullopt : std::optional<int64_t>(at->second);
    if (r && *r >= range.end) continue;  // every reject of the range is in already
    bool any = false;
    for (const ReadyGroup& group : committing) {
      if (group.topic != range.topic || group.partition != range.partition) continue;
      if (r && group.end < *r) continue;  // committed with an earlier rejects commit
      for (const SegmentEntry& file : group.files) {
        if (!rejects_files_.count(file.file_name)) continue;
        const lake::DataFile& data = uploaded_.at(file.file_name);
        if (r && group.start < *r) {
          // R moves only to the ends of the chains committed with it, and a range's chain is
          // the same files until they land: a rejects ledger inside a group cannot come from
          // this volume (another process's files for an overlapping range).
          return ClassifiedError(ErrorClass::kFatal, "wal", "ledger_inside_range",
                                 "the rejects ledger of " + range.topic + "[" +
                                     std::to_string(range.partition) +
                                     "] stands inside the range of WAL file " + file.path);
        }
        request.files.push_back(data);
        count += data.info.rows;
        any = true;
      }
    }
    // R moves from where it stands to the chain's end. Below the chain's start it claims the
    // offsets in between too: the chain starts at the rows' ledger D (or at the partition's
    // origin), so every reject below it is in the rejects table already.
    if (any)
      request.offsets.push_back({range.topic, range.partition, r.value_or(range.start), range.end});
  }
  if (request.files.empty()) return true;
  request.writer = rows.writer + "/rejects";
  request.message = "weir WAL commit (rejects)";
  WEIR_ASSIGN_OR_RAISE(const lake::CommitResult outcome, rejects->Commit(request));
  bool landed = outcome.status == lake::CommitStatus::kCommitted ||
                outcome.status == lake::CommitStatus::kAlreadyCommitted;
  if (outcome.status == lake::CommitStatus::kOutcomeUnknown) {
    WEIR_ASSIGN_OR_RAISE(const auto found, rejects->FindCommit(request));
    landed = found.has_value();
  }
  if (outcome.status == lake::CommitStatus::kTableChanged) {
    return ClassifiedError(
        ErrorClass::kFatal, "wal", "table_changed",
        "table " + rejects->name() + " changed under the WAL commit: " + outcome.reason);
  }
  // Fenced (another writer moved R since it was read), a conflict, or not landed: the next
  // interval reads R again; the rows wait for their rejects.
  if (!landed) {
    result->status = outcome.status;
    return false;
  }
  result->rejects = count;
  FaultPoint("exit_after_rejects_commit");
  return true;
}

}  // namespace weir::wal
