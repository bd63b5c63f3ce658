#include "base/writer_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

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

}  // namespace
}  // namespace weir
