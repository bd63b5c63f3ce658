#include "ingest/encode_lanes.h"

#include <algorithm>

namespace weir::ingest {

EncodeLanes::EncodeLanes(size_t lanes) : lanes_(std::max<size_t>(lanes, 1)) {
  if (lanes_.size() == 1) return;  // jobs run on the caller's thread
  for (auto& lane : lanes_) lane.thread = std::thread([this, &lane] { Loop(lane); });
}

EncodeLanes::~EncodeLanes() {
  (void)Drain();
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  for (auto& lane : lanes_) {
    if (lane.thread.joinable()) lane.thread.join();
  }
}

size_t EncodeLanes::Acquire() {
  if (lanes_.size() == 1) return 0;
  std::unique_lock lock(mutex_);
  size_t idle = 0;
  changed_.wait(lock, [&] {
    const auto it =
        std::find_if(lanes_.begin(), lanes_.end(), [](const Lane& lane) { return !lane.busy; });
    idle = static_cast<size_t>(it - lanes_.begin());
    return it != lanes_.end();
  });
  return idle;
}

void EncodeLanes::Run(size_t lane, std::function<Status()> job) {
  if (lanes_.size() == 1) {
    Status done = job();
    std::lock_guard lock(mutex_);
    if (failed_.ok() && !done.ok()) failed_ = std::move(done);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    lanes_[lane].job = std::move(job);
    lanes_[lane].busy = true;
  }
  changed_.notify_all();
}

bool EncodeLanes::Failed() const {
  std::lock_guard lock(mutex_);
  return !failed_.ok();
}

Status EncodeLanes::Drain() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] {
    return std::none_of(lanes_.begin(), lanes_.end(), [](const Lane& lane) { return lane.busy; });
  });
  Status failed = std::move(failed_);
  failed_ = Status::OK();
  return failed;
}

void EncodeLanes::Loop(Lane& lane) {
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return lane.busy || stop_; });
    if (!lane.busy) return;  // stopping, and idle
    auto job = std::move(lane.job);
    lock.unlock();
    Status done = job();
    job = nullptr;  // what the job held is freed before the lane is idle again
    lock.lock();
    if (failed_.ok() && !done.ok()) failed_ = std::move(done);
    lane.busy = false;
    changed_.notify_all();
  }
}

}  // namespace weir::ingest
