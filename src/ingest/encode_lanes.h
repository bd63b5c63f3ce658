// Encode lanes (issue 12, `flush.encode_lanes`): the parts of one streamed flush encoded into
// Parquet on several threads at once. Arrow encodes the columns of one row group in parallel,
// one task per column, so a row group is no faster than its largest column (a JSON `properties`
// column is most of the bytes); lanes encode different parts at the same time instead, each
// into its own open files, which the flush commits together.
//
// A lane runs one job at a time on its own thread. The flush thread takes the lowest-numbered
// idle lane for each part (Acquire waits while every lane is busy), so a flush that keeps up
// with its records uses lane 0 alone (and writes the files one lane would), and the other lanes
// work only while parts queue up. With one lane nothing runs on another thread: Run calls the
// job at once.
//
// A job's error is kept until Drain: Failed says (without waiting) whether any job since the
// last Drain failed, Drain waits for every lane to be idle and returns the first error.
//
// Threading: Acquire, Run, Failed and Drain from one thread (the flush thread); each job on its
// lane's thread, never two of one lane at once. The destructor drains and joins.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "base/status.h"

namespace weir::ingest {

class EncodeLanes {
 public:
  explicit EncodeLanes(size_t lanes);
  ~EncodeLanes();
  EncodeLanes(const EncodeLanes&) = delete;
  EncodeLanes& operator=(const EncodeLanes&) = delete;

  size_t size() const { return lanes_.size(); }
  // The lowest-numbered idle lane, once one is idle.
  size_t Acquire();
  // Runs `job` on `lane` (Acquire's); with one lane, here and now.
  void Run(size_t lane, std::function<Status()> job);
  // Whether a job since the last Drain failed (without waiting for the running ones).
  bool Failed() const;
  // Waits until every lane is idle; the first error of the jobs since the last Drain.
  Status Drain();

 private:
  struct Lane {
    std::function<Status()> job;  // GUARDED_BY(mutex_): set while the lane is busy
    bool busy = false;            // GUARDED_BY(mutex_)
    std::thread thread;
  };
  void Loop(Lane& lane);

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Lane> lanes_;
  Status failed_;      // GUARDED_BY(mutex_): the first error since the last Drain
  bool stop_ = false;  // GUARDED_BY(mutex_)
};

}  // namespace weir::ingest
