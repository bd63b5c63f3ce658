#include "serve/activity.h"

#include <utility>

namespace weir::serve {

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {
// pg_stat_activity's application_name is NAMEDATALEN - 1 bytes at most, as in PostgreSQL.
std::string Shown(const std::string& application) { return application.substr(0, 63); }
}  // namespace

void ActivityRegistry::Add(const BackendActivity& activity, uint64_t connection_id,
                           Signals signals) {
  std::lock_guard lock(mutex_);
  sessions_[activity.pid] = Entry{activity, connection_id, std::move(signals), {}};
  sessions_[activity.pid].activity.application = Shown(activity.application);
}

void ActivityRegistry::Remove(int32_t pid) {
  {
    std::lock_guard lock(mutex_);
    sessions_.erase(pid);
  }
  gone_.notify_all();
}

void ActivityRegistry::Started(int32_t pid, const std::string& query, bool in_transaction) {
  const int64_t now = NowMicros();
  std::lock_guard lock(mutex_);
  auto found = sessions_.find(pid);
  if (found == sessions_.end()) return;
  BackendActivity& a = found->second.activity;
  a.state = "active";
  a.query = query;
  a.query_start = a.state_change = now;
  if (!in_transaction || a.xact_start == 0) a.xact_start = now;
}

void ActivityRegistry::Finished(int32_t pid, char transaction_status,
                                const std::string& application) {
  const int64_t now = NowMicros();
  std::lock_guard lock(mutex_);
  auto found = sessions_.find(pid);
  if (found == sessions_.end()) return;
  BackendActivity& a = found->second.activity;
  a.state = transaction_status == 'T'   ? "idle in transaction"
            : transaction_status == 'E' ? "idle in transaction (aborted)"
                                        : "idle";
  if (transaction_status == 'I') a.xact_start = 0;
  a.state_change = now;
  a.application = Shown(application);
}

const ActivityRegistry::Entry* ActivityRegistry::Caller(uint64_t connection_id) const {
  for (const auto& [pid, entry] : sessions_) {
    if (entry.connection_id == connection_id) return &entry;
  }
  return nullptr;
}

std::vector<ActivityRegistry::Row> ActivityRegistry::Snapshot(uint64_t caller_connection) const {
  std::lock_guard lock(mutex_);
  const Entry* caller = Caller(caller_connection);
  // Write users see everything (as pg_read_all_stats does); read users (and callers that are
  // no session) see their own user's sessions whole, the others' without details.
  const bool privileged = caller != nullptr && !caller->activity.read_only;
  std::vector<Row> rows;
  for (const auto& [pid, entry] : sessions_) {
    const bool visible =
        privileged || (caller != nullptr && caller->activity.user == entry.activity.user);
    rows.push_back({entry.activity, visible});
  }
  return rows;
}

bool ActivityRegistry::MaySignal(uint64_t caller_connection) const {
  std::lock_guard lock(mutex_);
  const Entry* caller = Caller(caller_connection);
  return caller != nullptr && !caller->activity.read_only;
}

ActivityRegistry::SignalResult ActivityRegistry::Signal(uint64_t caller_connection, int32_t pid,
                                                        bool terminate) {
  std::lock_guard lock(mutex_);
  const Entry* caller = Caller(caller_connection);
  if (caller == nullptr || caller->activity.read_only) return SignalResult::kRefused;
  auto found = sessions_.find(pid);
  if (found == sessions_.end()) return SignalResult::kNoSuchSession;
  const auto& signal = terminate ? found->second.signals.terminate : found->second.signals.cancel;
  if (signal) signal();
  return SignalResult::kSent;
}

ActivityRegistry::SignalResult ActivityRegistry::Cancel(uint64_t caller_connection, int32_t pid) {
  return Signal(caller_connection, pid, false);
}

ActivityRegistry::SignalResult ActivityRegistry::Terminate(uint64_t caller_connection,
                                                           int32_t pid) {
  return Signal(caller_connection, pid, true);
}

bool ActivityRegistry::WaitGone(int32_t pid, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return gone_.wait_for(lock, timeout, [&] { return !sessions_.contains(pid); });
}

void ActivityRegistry::Warn(uint64_t caller_connection, std::string message) {
  std::lock_guard lock(mutex_);
  for (auto& [pid, entry] : sessions_) {
    if (entry.connection_id == caller_connection) entry.warnings.push_back(std::move(message));
  }
}

std::vector<std::string> ActivityRegistry::TakeWarnings(int32_t pid) {
  std::lock_guard lock(mutex_);
  auto found = sessions_.find(pid);
  if (found == sessions_.end()) return {};
  return std::exchange(found->second.warnings, {});
}

}  // namespace weir::serve
