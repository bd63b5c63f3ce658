#include "wal/recovery.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "wal/segment_file.h"

namespace weir::wal {

std::string_view ToString(RecoveryAction action) {
  switch (action) {
    case RecoveryAction::kDelete:
      return "delete";
    case RecoveryAction::kKeep:
      return "keep";
    case RecoveryAction::kDeleteLocal:
      return "delete_local";
    case RecoveryAction::kRefuse:
      return "refuse";
    case RecoveryAction::kIgnore:
      return "ignore";
  }
  return "ignore";
}

Result<std::vector<RecoveryDecision>> PlanRecovery(const std::vector<SegmentEntry>& entries,
                                                   const CommittedOffsets& committed,
                                                   TableProbe& probe) {
  std::vector<RecoveryDecision> plan;
  plan.reserve(entries.size());
  for (const SegmentEntry& entry : entries) {
    RecoveryDecision decision;
    decision.file = entry;
    if (!entry.name) {
      decision.action = RecoveryAction::kIgnore;
      decision.reason = "not a WAL segment name";
      plan.push_back(std::move(decision));
      continue;
    }
    const SegmentName& name = *entry.name;
    const auto found = committed.find({name.topic, name.partition});
    if (found != committed.end()) decision.committed = found->second;
    if (name.state == SegmentState::kActive) {
      decision.action = RecoveryAction::kDelete;
      decision.reason = "active: its offsets were never committed, Kafka delivers them again";
    } else if (!decision.committed || *decision.committed <= name.start) {
      decision.action = RecoveryAction::kDelete;
      decision.reason =
          "ready, committed offset " +
          (decision.committed ? std::to_string(*decision.committed) : std::string("none")) +
          " not after its first offset " + std::to_string(name.start) +
          ": Kafka delivers the records again";
    } else if (*decision.committed <= name.end) {
      decision.action = RecoveryAction::kRefuse;
      decision.reason = "committed offset " + std::to_string(*decision.committed) +
                        " lies inside the file's range " + std::to_string(name.start) + "-" +
                        std::to_string(name.end) + ": this cannot occur in correct operation";
    } else {
      auto answer = probe.Probe(entry);
      if (!answer.ok()) return WithContext(answer.status(), "WAL file " + entry.path);
      const bool ledger_past = answer->ledger && *answer->ledger > name.end;
      const bool referenced = answer->referenced.value_or(ledger_past);
      if (referenced && !ledger_past) {
        decision.action = RecoveryAction::kRefuse;
        decision.in_table = false;
        decision.reason = "the table references the file but its ledger (" +
                          (answer->ledger ? std::to_string(*answer->ledger) : std::string("none")) +
                          ") has not reached its end " + std::to_string(name.end) +
                          ": the lake disagrees with itself";
      } else if (referenced) {
        decision.action = RecoveryAction::kDeleteLocal;
        decision.in_table = true;
        decision.reason = "committed and in the table: only the local copy goes";
      } else {
        decision.action = RecoveryAction::kKeep;
        decision.in_table = false;
        decision.reason = "committed, not in the table: the uploader and committer finish it";
      }
    }
    plan.push_back(std::move(decision));
  }
  return plan;
}

Status ApplyRecovery(const std::string& directory, const std::vector<RecoveryDecision>& decisions) {
  std::string refused;
  for (const RecoveryDecision& decision : decisions) {
    if (decision.action != RecoveryAction::kRefuse) continue;
    refused += "\n  " + decision.file.path + ": " + decision.reason;
  }
  if (!refused.empty()) {
    return ClassifiedError(ErrorClass::kFatal, "wal", "recovery_refused",
                           "WAL recovery refuses to start:" + refused);
  }
  bool deleted = false;
  for (const RecoveryDecision& decision : decisions) {
    if (decision.action != RecoveryAction::kDelete &&
        decision.action != RecoveryAction::kDeleteLocal) {
      continue;
    }
    if (std::remove(decision.file.path.c_str()) != 0 && errno != ENOENT) {
      return ClassifiedError(ErrorClass::kFatal, "errno", std::to_string(errno),
                             "delete WAL file " + decision.file.path + ": " + std::strerror(errno));
    }
    deleted = true;
  }
  if (deleted) WEIR_RETURN_NOT_OK(SyncPath(directory));
  return Status::OK();
}

}  // namespace weir::wal
