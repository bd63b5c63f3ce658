// WalPipeline's Kafka offset commits of its rotations (docs/ARCHITECTURE.md "WAL mode": a
// rotation's end + 1 is committed right after the rename), and what a commit the group
// refuses leaves: the poll thread's side, under rotating_.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include <spdlog/spdlog.h>

#include "ingest/wal_pipeline.h"
#include "ingest/wal_pipeline_dataset.h"
#include "wal/fault.h"
#include "wal/segment_file.h"

namespace weir::ingest {
namespace {

// The group refused an offset commit for good: the member's generation is over.
bool RejectedByGroup(const Status& status) {
  const ErrorDetail* detail = GetErrorDetail(status);
  if (detail == nullptr) return false;
  const std::string& code = detail->code();
  for (const char* refused : {"ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "REBALANCE_IN_PROGRESS",
                              "FENCED_INSTANCE_ID", "STALE_MEMBER_EPOCH"}) {
    if (code.find(refused) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

Status WalPipeline::DiscardPending(const kafka::TopicPartition& tp) {
  const auto found = pending_.find(tp);
  if (found == pending_.end()) return Status::OK();
  const PendingCommit pending = std::move(found->second);
  pending_.erase(found);
  // Its offsets never reached Kafka: the files go, as recovery would delete them, and the
  // partition is dropped; its next owner reads the records again.
  for (const auto& path : pending.files) {
    if (std::remove(path.c_str()) != 0 && errno != ENOENT) {
      return Status::IOError("deleting WAL file ", path, ": ", std::strerror(errno));
    }
  }
  if (!pending.files.empty()) WEIR_RETURN_NOT_OK(wal::SyncPath(pending.directory));
  if (auto d = by_topic_.find(tp.topic); d != by_topic_.end()) {
    if (d->second->rotator->Holds(tp.topic, tp.partition)) {
      WEIR_RETURN_NOT_OK(d->second->rotator->Drop(tp.topic, tp.partition));
    }
  }
  next_offset_.erase(tp);
  spdlog::warn("WAL mode: {}: offsets refused and the partition gone; {} ready file(s) deleted",
               kafka::ToString(tp), pending.files.size());
  return Status::OK();
}

Status WalPipeline::CommitRotations(const std::vector<wal::Rotation>& rotations) {
  if (rotations.empty() && pending_.empty()) return Status::OK();
  for (const auto& rotation : rotations) {
    if (auto found = by_topic_.find(rotation.topic); found != by_topic_.end()) {
      found->second->rotations->Increment();
      PendingCommit& pending = pending_[{rotation.topic, rotation.partition}];
      pending.offset = std::max(pending.offset, rotation.commit_offset());
      pending.directory = found->second->directory;
      for (const auto& file : rotation.files) pending.files.push_back(file.path);
    }
    spdlog::debug("WAL rotation {}[{}] {}-{}: {} file(s)", rotation.topic, rotation.partition,
                  rotation.start, rotation.end, rotation.files.size());
  }
  if (!rotations.empty()) wal::FaultPoint("exit_after_rename");
  // Partitions no longer assigned cannot commit (the consumer skips them): what they wait for
  // goes now.
  // (None while a failed consumer is being replaced.)
  const auto assignment =
      consumer_ ? consumer_->Assignment() : std::vector<kafka::TopicPartition>{};
  const std::set<kafka::TopicPartition> owned(assignment.begin(), assignment.end());
  std::vector<kafka::TopicPartition> gone;
  for (const auto& [tp, pending] : pending_) {
    if (!owned.count(tp)) gone.push_back(tp);
  }
  for (const auto& tp : gone) WEIR_RETURN_NOT_OK(DiscardPending(tp));
  if (pending_.empty()) return Status::OK();
  std::map<kafka::TopicPartition, int64_t> offsets;
  for (const auto& [tp, pending] : pending_) offsets[tp] = pending.offset;
  // The rotation is on disk; only now may Kafka skip its records. A failed commit is fatal:
  // recovery at the next start deletes the ready files (Kafka delivers them again).
  const Status done = consumer_->CommitOffsets(offsets);
  if (done.ok()) {
    pending_.clear();
    return Status::OK();
  }
  if (!RejectedByGroup(done)) return WithContext(done, "committing the offsets of a WAL rotation");
  // The group refused the commit: a rebalance moved the generation on. Partitions this member
  // keeps (a cooperative rebalance keeps most) commit again after the next poll, or with their
  // next rotation or release; the offsets of partitions it lost did not land, so their next
  // owner reads the records again, and their files go (DiscardPending, at the next attempt or
  // at the revocation). Either way the files stay only while their commit is pending.
  // (Logged once per rotation; the poll loop's retries of the same offsets at debug.)
  spdlog::log(rotations.empty() ? spdlog::level::debug : spdlog::level::warn,
              "WAL rotation offsets refused by the group ({}); {} partition(s) retried while "
              "assigned",
              done.message(), pending_.size());
  return Status::OK();
}

}  // namespace weir::ingest
