#include <string>

#include <gtest/gtest.h>

#include "assert_status.h"
#include "lake/iceberg/deletion_vector.h"
#include "lake/iceberg/puffin.h"

namespace weir::lake::iceberg {
namespace {

std::string Hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    out += digits[static_cast<uint8_t>(c) >> 4];
    out += digits[static_cast<uint8_t>(c) & 15];
  }
  return out;
}

TEST(DeletionVector, BlobOfTwoLowPositionsHasTheSpecsExactBytes) {
  DeletionVector dv;
  dv.Add(2);
  dv.Add(1);
  dv.Add(2);
  EXPECT_EQ(dv.Cardinality(), 2);
  // length 36 (BE) | magic | 1 bucket (8 bytes LE) | key 0 (LE) | CRoaring's portable bitmap
  // (cookie 12346, 1 container, key 0 cardinality-1 = 1, offset 16, values 1 and 2) | CRC (BE)
  EXPECT_EQ(Hex(dv.EncodeBlob()),
            "00000024"
            "d1d33964"
            "0100000000000000"
            "00000000"
            "3a30000001000000000001001000000001000200"
            "712fa6e8");
}

TEST(DeletionVector, PositionsAbove32BitsGoToTheirOwnBucketInKeyOrder) {
  DeletionVector dv;
  const int64_t high = (int64_t{5} << 32) + 7;
  dv.Add(high);
  dv.Add(3);
  const std::string bitmap = dv.SerializeBitmap();
  // 2 buckets, key 0 first; the bytes pyroaring's BitMap64([3, 5 << 32 | 7]).serialize() gives.
  EXPECT_EQ(Hex(bitmap),
            "0200000000000000"
            "00000000"
            "3a300000010000000000000010000000"
            "0300"
            "05000000"
            "3a300000010000000000000010000000"
            "0700");
  ASSERT_OK_AND_ASSIGN(const DeletionVector back, DeletionVector::DeserializeBitmap(bitmap));
  EXPECT_EQ(back.Positions(), (std::vector<int64_t>{3, high}));
  EXPECT_TRUE(back.Contains(high));
  EXPECT_FALSE(back.Contains(7));
}

TEST(DeletionVector, RoundTripsAndMergesARunOfAHundredThousandPositions) {
  DeletionVector dv;
  for (int64_t p = 0; p < 100000; ++p) dv.Add(p);
  DeletionVector more;
  more.Add(200000);
  more.Add(5);
  dv.Merge(more);
  const std::string blob = dv.EncodeBlob();
  EXPECT_LT(blob.size(), 64u);  // run containers
  ASSERT_OK_AND_ASSIGN(const DeletionVector back, DeletionVector::DecodeBlob(blob));
  EXPECT_EQ(back.Cardinality(), 100001);
  EXPECT_TRUE(back.Contains(99999));
  EXPECT_TRUE(back.Contains(200000));
  EXPECT_FALSE(back.Contains(100000));
}

TEST(DeletionVector, DecodeRefusesABadCrcMagicOrLength) {
  DeletionVector dv;
  dv.Add(9);
  const std::string blob = dv.EncodeBlob();
  std::string bad_crc = blob;
  bad_crc.back() ^= 1;
  EXPECT_TRUE(DeletionVector::DecodeBlob(bad_crc).status().IsInvalid());
  std::string bad_magic = blob;
  bad_magic[4] = 0;
  EXPECT_TRUE(DeletionVector::DecodeBlob(bad_magic).status().IsInvalid());
  EXPECT_TRUE(DeletionVector::DecodeBlob(blob.substr(0, blob.size() - 1)).status().IsInvalid());
}

TEST(Puffin, FileOfTwoBlobsHasMagicsFooterSizeAndTheirOffsets) {
  std::vector<PuffinBlob> blobs(2);
  blobs[0] = {std::string(kDeletionVectorBlobType),
              {},
              -1,
              -1,
              {{"referenced-data-file", "s3://b/t/data/a.parquet"}, {"cardinality", "1"}},
              "abc"};
  blobs[1] = {std::string(kDeletionVectorBlobType),
              {},
              -1,
              -1,
              {{"referenced-data-file", "s3://b/t/data/b.parquet"}, {"cardinality", "2"}},
              "defgh"};
  std::vector<PuffinBlobMetadata> placed;
  const std::string file = EncodePuffin(blobs, {{"created-by", "weir"}}, placed);
  ASSERT_EQ(placed.size(), 2u);
  EXPECT_EQ(placed[0].offset, 4);
  EXPECT_EQ(placed[0].length, 3);
  EXPECT_EQ(placed[1].offset, 7);
  EXPECT_EQ(placed[1].length, 5);
  EXPECT_EQ(file.substr(0, 12), "PFA1abcdefgh");
  EXPECT_EQ(file.substr(12, 4), "PFA1");
  const std::string payload =
      R"({"blobs":[{"fields":[],"length":3,"offset":4,"properties":{"cardinality":"1",)"
      R"("referenced-data-file":"s3://b/t/data/a.parquet"},"sequence-number":-1,)"
      R"("snapshot-id":-1,"type":"deletion-vector-v1"},{"fields":[],"length":5,"offset":7,)"
      R"("properties":{"cardinality":"2","referenced-data-file":"s3://b/t/data/b.parquet"},)"
      R"("sequence-number":-1,"snapshot-id":-1,"type":"deletion-vector-v1"}],)"
      R"("properties":{"created-by":"weir"}})";
  EXPECT_EQ(file.substr(16, payload.size()), payload);
  const std::string tail = file.substr(16 + payload.size());
  ASSERT_EQ(tail.size(), 12u);
  EXPECT_EQ(static_cast<uint8_t>(tail[0]) | (static_cast<uint8_t>(tail[1]) << 8), payload.size());
  EXPECT_EQ(Hex(tail.substr(2)), "00000000000050464131");  // size's high bytes, flags, magic
  ASSERT_OK_AND_ASSIGN(const auto read, ReadPuffinFooter(file));
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[1].offset, 7);
  EXPECT_EQ(read[1].length, 5);
  EXPECT_EQ(read[1].snapshot_id, -1);
  EXPECT_EQ(read[1].properties.at("referenced-data-file"), "s3://b/t/data/b.parquet");
  EXPECT_EQ(file.substr(read[1].offset, read[1].length), "defgh");
}

TEST(Puffin, ReadRefusesAFileWithoutMagicOrWithACompressedFooter) {
  std::vector<PuffinBlobMetadata> placed;
  std::string file = EncodePuffin({}, {}, placed);
  ASSERT_OK(ReadPuffinFooter(file).status());
  EXPECT_TRUE(ReadPuffinFooter(file.substr(1)).status().IsInvalid());
  file[file.size() - 8] = 1;  // flags: compressed
  EXPECT_TRUE(ReadPuffinFooter(file).status().IsNotImplemented());
}

}  // namespace
}  // namespace weir::lake::iceberg
