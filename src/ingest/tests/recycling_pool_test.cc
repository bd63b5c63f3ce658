#include "ingest/recycling_pool.h"

#include <cstring>
#include <memory>

#include <arrow/builder.h>
#include <gtest/gtest.h>

namespace weir::ingest {
namespace {

constexpr int64_t kMin = 64 << 10;

class RecyclingPoolTest : public ::testing::Test {
 protected:
  arrow::ProxyMemoryPool base_{arrow::default_memory_pool()};
  RecyclingMemoryPool pool_{&base_, kMin, 4 << 20};
};

TEST_F(RecyclingPoolTest, AFreedLargeBlockServesTheNextRequestOfAboutItsSize) {
  uint8_t* first = nullptr;
  ASSERT_TRUE(pool_.Allocate(1 << 20, 64, &first).ok());
  std::memset(first, 7, 1 << 20);
  EXPECT_EQ(pool_.bytes_allocated(), 1 << 20);
  pool_.Free(first, 1 << 20, 64);
  EXPECT_EQ(pool_.bytes_allocated(), 0);
  EXPECT_EQ(pool_.retained_bytes(), 1 << 20);
  EXPECT_EQ(base_.bytes_allocated(), 1 << 20);  // kept, not returned

  uint8_t* second = nullptr;
  ASSERT_TRUE(pool_.Allocate((1 << 20) - 1000, 64, &second).ok());
  EXPECT_EQ(second, first);
  EXPECT_EQ(pool_.reuses(), 1);
  EXPECT_EQ(pool_.retained_bytes(), 0);
  EXPECT_EQ(pool_.bytes_allocated(), 1 << 20);  // its capacity
  pool_.Free(second, (1 << 20) - 1000, 64);
}

TEST_F(RecyclingPoolTest, ARequestALittleLargerThanAFreedBlocksStillGetsIt) {
  // A part's column is rarely the same size twice: a request just over the last one's must not
  // take a new block from the allocator (which the kernel faults in and zeroes again).
  constexpr int64_t kLast = 13'000'000;
  uint8_t* first = nullptr;
  pool_.set_retain_bytes(32 << 20);
  ASSERT_TRUE(pool_.Allocate(kLast, 64, &first).ok());
  EXPECT_EQ(pool_.bytes_allocated(), 14 << 20);  // 8 MiB + 3 × 2 MiB
  EXPECT_EQ(pool_.fresh_bytes(), 14 << 20);
  pool_.Free(first, kLast, 64);
  uint8_t* second = nullptr;
  ASSERT_TRUE(pool_.Allocate(kLast + 100'000, 64, &second).ok());
  EXPECT_EQ(second, first);
  EXPECT_EQ(pool_.reuses(), 1);
  EXPECT_EQ(pool_.fresh_bytes(), 14 << 20);  // nothing new
  pool_.Free(second, kLast + 100'000, 64);
}

TEST_F(RecyclingPoolTest, ABlockMoreThanTwiceTheRequestIsNotHandedOut) {
  uint8_t* big = nullptr;
  ASSERT_TRUE(pool_.Allocate(2 << 20, 64, &big).ok());
  pool_.Free(big, 2 << 20, 64);
  uint8_t* small = nullptr;
  ASSERT_TRUE(pool_.Allocate(512 << 10, 64, &small).ok());
  EXPECT_NE(small, big);
  EXPECT_EQ(pool_.reuses(), 0);
  EXPECT_EQ(pool_.retained_bytes(), 2 << 20);
  pool_.Free(small, 512 << 10, 64);
}

TEST_F(RecyclingPoolTest, GrowingWithinTheCapacityKeepsTheBlockAndGrowingPastItCopies) {
  uint8_t* block = nullptr;
  ASSERT_TRUE(pool_.Allocate(1 << 20, 64, &block).ok());
  pool_.Free(block, 1 << 20, 64);
  uint8_t* taken = nullptr;
  ASSERT_TRUE(pool_.Allocate(600 << 10, 64, &taken).ok());
  ASSERT_EQ(taken, block);
  std::memset(taken, 3, 600 << 10);
  uint8_t* grown = taken;
  ASSERT_TRUE(pool_.Reallocate(600 << 10, 1 << 20, 64, &grown).ok());
  EXPECT_EQ(grown, block);  // within its capacity: in place
  ASSERT_TRUE(pool_.Reallocate(1 << 20, 3 << 20, 64, &grown).ok());
  EXPECT_NE(grown, block);
  EXPECT_EQ(grown[0], 3);
  EXPECT_EQ(grown[(600 << 10) - 1], 3);
  EXPECT_EQ(pool_.retained_bytes(), 1 << 20);  // the outgrown block is kept
  pool_.Free(grown, 3 << 20, 64);
  EXPECT_EQ(pool_.retained_bytes(), 4 << 20);
  EXPECT_EQ(pool_.bytes_allocated(), 0);
}

TEST_F(RecyclingPoolTest, ASmallBlockGrownPastTheMinimumBecomesRecycled) {
  uint8_t* block = nullptr;
  ASSERT_TRUE(pool_.Allocate(1000, 64, &block).ok());
  std::memset(block, 9, 1000);
  ASSERT_TRUE(pool_.Reallocate(1000, 200 << 10, 64, &block).ok());
  EXPECT_EQ(block[999], 9);
  pool_.Free(block, 200 << 10, 64);
  EXPECT_EQ(pool_.retained_bytes(), 224 << 10);  // its size class: 128 KiB + 3 × 32 KiB
  EXPECT_EQ(pool_.bytes_allocated(), 0);
}

TEST_F(RecyclingPoolTest, RetentionIsBoundedAndReleaseUnusedReturnsEverything) {
  std::vector<uint8_t*> blocks(6);
  for (auto& block : blocks) ASSERT_TRUE(pool_.Allocate(1 << 20, 64, &block).ok());
  for (auto* block : blocks) pool_.Free(block, 1 << 20, 64);
  EXPECT_EQ(pool_.retained_bytes(), 4 << 20);  // the bound; the other two went back
  EXPECT_EQ(base_.bytes_allocated(), 4 << 20);
  pool_.set_retain_bytes(2 << 20);
  EXPECT_EQ(pool_.retained_bytes(), 2 << 20);
  pool_.ReleaseUnused();
  EXPECT_EQ(pool_.retained_bytes(), 0);
  EXPECT_EQ(base_.bytes_allocated(), 0);
}

TEST_F(RecyclingPoolTest, ABlockFreedNowPushesOutTheOnesFreedLongestAgo) {
  // Blocks left from an earlier load (a builder's first growth steps) must not hold the room
  // that the blocks of the current load need.
  uint8_t* stale = nullptr;
  uint8_t* current = nullptr;
  ASSERT_TRUE(pool_.Allocate(3 << 20, 64, &stale).ok());
  ASSERT_TRUE(pool_.Allocate(2 << 20, 64, &current).ok());
  pool_.Free(stale, 3 << 20, 64);
  pool_.Free(current, 2 << 20, 64);
  EXPECT_EQ(pool_.retained_bytes(), 2 << 20);  // 3 + 2 MiB is over the 4 MiB bound
  EXPECT_EQ(base_.bytes_allocated(), 2 << 20);
  uint8_t* again = nullptr;
  ASSERT_TRUE(pool_.Allocate(2 << 20, 64, &again).ok());
  EXPECT_EQ(again, current);
  pool_.Free(again, 2 << 20, 64);
  // A block over the bound is never kept.
  uint8_t* huge = nullptr;
  ASSERT_TRUE(pool_.Allocate(5 << 20, 64, &huge).ok());
  pool_.Free(huge, 5 << 20, 64);
  EXPECT_EQ(pool_.retained_bytes(), 2 << 20);
}

TEST_F(RecyclingPoolTest, ArrowBuildersRunOnItAndReuseTheLastBatchsBlocks) {
  for (int round = 0; round < 3; ++round) {
    arrow::StringBuilder builder(&pool_);
    for (int i = 0; i < 20000; ++i) ASSERT_TRUE(builder.Append("a value of some length").ok());
    std::shared_ptr<arrow::Array> array;
    ASSERT_TRUE(builder.Finish(&array).ok());
    ASSERT_EQ(array->length(), 20000);
    EXPECT_EQ(static_cast<const arrow::StringArray&>(*array).GetView(19999),
              "a value of some length");
  }
  EXPECT_GT(pool_.reuses(), 0);
  EXPECT_EQ(pool_.bytes_allocated(), 0);
  EXPECT_EQ(base_.bytes_allocated(), pool_.retained_bytes());
}

}  // namespace
}  // namespace weir::ingest
