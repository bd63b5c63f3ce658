#include "base/scoped_fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include <gtest/gtest.h>

namespace weir {
namespace {

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

TEST(ScopedFdTest, ClosesWhenDestroyed) {
  int raw = -1;
  {
    int pipe_fds[2];
    ASSERT_EQ(::pipe(pipe_fds), 0);
    ::close(pipe_fds[1]);
    raw = pipe_fds[0];
    const ScopedFd fd(raw);
    EXPECT_TRUE(fd.valid());
    EXPECT_EQ(fd.get(), raw);
    EXPECT_TRUE(IsOpen(raw));
  }
  EXPECT_FALSE(IsOpen(raw));
}

TEST(ScopedFdTest, MovesOwnershipAndClosesOnce) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ScopedFd read_end(pipe_fds[0]);
  ScopedFd write_end(pipe_fds[1]);
  ScopedFd moved(std::move(read_end));
  EXPECT_FALSE(read_end.valid());  // NOLINT(bugprone-use-after-move): the moved-from state
  EXPECT_EQ(moved.get(), pipe_fds[0]);
  // Assigning over an open descriptor closes it first.
  moved = std::move(write_end);
  EXPECT_FALSE(IsOpen(pipe_fds[0]));
  EXPECT_TRUE(IsOpen(pipe_fds[1]));
  EXPECT_EQ(moved.Close(), 0);
  EXPECT_FALSE(moved.valid());
  EXPECT_FALSE(IsOpen(pipe_fds[1]));
  EXPECT_EQ(moved.Close(), 0);  // nothing left to close
}

TEST(ScopedFdTest, ReleaseGivesTheDescriptorUp) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ::close(pipe_fds[1]);
  int raw = -1;
  {
    ScopedFd fd(pipe_fds[0]);
    raw = fd.Release();
    EXPECT_FALSE(fd.valid());
  }
  EXPECT_TRUE(IsOpen(raw));
  ::close(raw);
}

}  // namespace
}  // namespace weir
