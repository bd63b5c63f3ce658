#include "base/writer_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace weir {
namespace {

using std::chrono::milliseconds;

std::string LockPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("weir-writer-lock-" + name + "-" + std::to_string(::getpid())))
      .string();
}

TEST(WriterLockTest, OnePathIsOneLockInTheProcess) {
  auto a = WriterLock::ForPath(LockPath("same"));
  auto b = WriterLock::ForPath(LockPath("same"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
}

class WriterLockThreadsTest : public ::testing::TestWithParam<bool> {};

TEST_P(WriterLockThreadsTest, ThreadsOfOneProcessTakeTurns) {
  auto lock = GetParam() ? *WriterLock::ForPath(LockPath("threads"))
                         : WriterLock::InProcess("threads of this process");
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        auto hold = lock->Acquire(milliseconds(10000));
        ASSERT_TRUE(hold.ok()) << hold.status().ToString();
        if (inside.fetch_add(1) != 0) ++overlaps;
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        inside.fetch_sub(1);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(overlaps.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(FileAndInProcess, WriterLockThreadsTest, ::testing::Bool());

TEST(WriterLockTest, AnotherProcessHoldingItMakesAcquireWaitThenTimeOutOrSucceed) {
  const std::string path = LockPath("process");
  auto lock = *WriterLock::ForPath(path);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Its own open file description, as another process has.
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0 || ::flock(fd, LOCK_EX) != 0) ::_exit(2);
    (void)::write(ready[1], "x", 1);
    ::usleep(600 * 1000);
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  auto early = lock->Acquire(milliseconds(100));
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(GetErrorDetail(early.status())->code(), "lock_timeout");
  EXPECT_EQ(ClassOf(early.status()), ErrorClass::kRetriable);
  auto cancelled = lock->Acquire(milliseconds(10000), [] { return true; });
  ASSERT_FALSE(cancelled.ok());
  EXPECT_EQ(GetErrorDetail(cancelled.status())->code(), "lock_cancelled");
  auto later = lock->Acquire(milliseconds(10000));
  EXPECT_TRUE(later.ok()) << later.status().ToString();
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(WriterLockTest, AProcessRetakingItBackToBackDoesNotStarveAnother) {
  // The child takes the lock again the moment it lets go, as busy writing sessions of weir
  // serve do, and counts its turns where the parent sees them. While the parent waits, the child
  // gets at most the turn it is in and one more; without turns, the parent's polls would find the
  // lock free only in the microseconds between two of the child's turns, once in dozens.
  const std::string path = LockPath("turns");
  auto lock = *WriterLock::ForPath(path);
  auto* turns = static_cast<std::atomic<int>*>(::mmap(nullptr, sizeof(std::atomic<int>) * 2,
                                                      PROT_READ | PROT_WRITE,
                                                      MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(turns, MAP_FAILED);
  new (&turns[0]) std::atomic<int>(0);  // the child's turns
  new (&turns[1]) std::atomic<int>(0);  // 1: the child should stop
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Another name for the same file: another WriterLock, another open file description.
    auto own = WriterLock::ForPath(std::filesystem::path(path).parent_path().string() + "/./" +
                                   std::filesystem::path(path).filename().string());
    if (!own.ok()) ::_exit(2);
    while (turns[1].load() == 0) {
      auto hold = (*own)->Acquire(milliseconds(60000));
      if (!hold.ok()) ::_exit(3);
      turns[0].fetch_add(1);
      ::usleep(20 * 1000);
    }
    ::_exit(0);
  }
  while (turns[0].load() == 0) ::usleep(1000);
  int most = 0;
  for (int i = 0; i < 20; ++i) {
    const int before = turns[0].load();
    auto hold = lock->Acquire(milliseconds(60000));
    ASSERT_TRUE(hold.ok()) << hold.status().ToString();
    most = std::max(most, turns[0].load() - before);
    ::usleep(1000);
  }
  turns[1].store(1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_LE(most, 2) << "the other process took the lock " << most
                     << " times while this one waited";
  ::munmap(turns, sizeof(std::atomic<int>) * 2);
}

}  // namespace
}  // namespace weir
