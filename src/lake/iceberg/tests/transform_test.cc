#include <gtest/gtest.h>

#include "assert_status.h"
#include "lake/iceberg/binary_value.h"
#include "lake/iceberg/partition_spec.h"
#include "lake/iceberg/transform.h"

namespace weir::lake::iceberg {
namespace {

Type T(TypeId id) { return Type::Primitive(id); }

int64_t Micros(int64_t y, int mo, int d, int h, int mi, int s, int64_t us = 0) {
  return ((DaysFromCivil(y, mo, d) * 24 + h) * 60 + mi) * 60 * 1'000'000 + s * 1'000'000LL + us;
}

UuidBytes TestUuid() {
  return {0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD,
          0xA4, 0x79, 0x3F, 0x34, 0x9C, 0xB7, 0x85, 0xE7};
}

int32_t Hash(const Type& type, const Value& value) {
  auto hash = BucketHash(type, value);
  EXPECT_TRUE(hash.ok()) << hash.status().ToString();
  return hash.ValueOr(0);
}

TEST(IcebergBucketHash, MatchesTheSpecAppendixBVectors) {
  EXPECT_EQ(Hash(T(TypeId::kInt), int32_t{34}), 2017239379);
  EXPECT_EQ(Hash(T(TypeId::kLong), int64_t{34}), 2017239379);
  EXPECT_EQ(Hash(Type::Decimal(9, 2), DecimalValue{1420}), -500754589);
  EXPECT_EQ(Hash(T(TypeId::kDate), static_cast<int32_t>(DaysFromCivil(2017, 11, 16))), -653330422);
  EXPECT_EQ(Hash(T(TypeId::kTime), int64_t{(22 * 3600 + 31 * 60 + 8) * 1'000'000LL}), -662762989);
  EXPECT_EQ(Hash(T(TypeId::kTimestamp), Micros(2017, 11, 16, 22, 31, 8)), -2047944441);
  EXPECT_EQ(Hash(T(TypeId::kTimestamp), Micros(2017, 11, 16, 22, 31, 8, 1)), -1207196810);
  EXPECT_EQ(Hash(T(TypeId::kTimestampTz), Micros(2017, 11, 16, 22, 31, 8)), -2047944441);
  EXPECT_EQ(Hash(T(TypeId::kString), std::string("iceberg")), 1210000089);
  EXPECT_EQ(Hash(T(TypeId::kUuid), TestUuid()), 1488055340);
  EXPECT_EQ(Hash(Type::Fixed(4), std::string("\x00\x01\x02\x03", 4)), -188683207);
  EXPECT_EQ(Hash(T(TypeId::kBinary), std::string("\x00\x01\x02\x03", 4)), -188683207);
}

TEST(IcebergBucketHash, RefusesTypesTheSpecDoesNotBucket) {
  EXPECT_FALSE(BucketHash(T(TypeId::kDouble), 1.0).ok());
  EXPECT_FALSE(Transform::Bucket(4).ResultType(T(TypeId::kBoolean)).ok());
}

TEST(IcebergMinimalBigEndian, DropsOnlySignBytes) {
  EXPECT_EQ(MinimalBigEndian(0), std::string(1, '\x00'));
  EXPECT_EQ(MinimalBigEndian(127), std::string(1, '\x7f'));
  EXPECT_EQ(MinimalBigEndian(128), std::string("\x00\x80", 2));
  EXPECT_EQ(MinimalBigEndian(-1), std::string(1, '\xff'));
  EXPECT_EQ(MinimalBigEndian(-128), std::string(1, '\x80'));
  EXPECT_EQ(MinimalBigEndian(-129), std::string("\xff\x7f", 2));
  EXPECT_EQ(MinimalBigEndian(1420), std::string("\x05\x8c", 2));
}

Value Apply(std::string_view transform, const Type& type, const Value& value) {
  auto t = Transform::Parse(transform);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  auto result = t->Apply(type, value);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ValueOr(Value());
}

TEST(IcebergTransform, BucketIsTheHashWithoutSignModN) {
  // (2017239379 & INT_MAX) % 16 = 3, "iceberg": 1210000089 % 16 = 9.
  EXPECT_EQ(std::get<int32_t>(Apply("bucket[16]", T(TypeId::kLong), int64_t{34})), 3);
  EXPECT_EQ(std::get<int32_t>(Apply("bucket[16]", T(TypeId::kString), std::string("iceberg"))), 9);
  // A negative hash loses its sign bit first: -500754589 & INT_MAX = 1646729059, % 10 = 9.
  EXPECT_EQ(std::get<int32_t>(Apply("bucket[10]", Type::Decimal(9, 2), DecimalValue{1420})), 9);
}

TEST(IcebergTransform, TruncateFollowsTheSpecExamples) {
  EXPECT_EQ(std::get<int32_t>(Apply("truncate[10]", T(TypeId::kInt), int32_t{1})), 0);
  EXPECT_EQ(std::get<int32_t>(Apply("truncate[10]", T(TypeId::kInt), int32_t{-1})), -10);
  EXPECT_EQ(std::get<int64_t>(Apply("truncate[10]", T(TypeId::kLong), int64_t{-1})), -10);
  EXPECT_EQ(std::get<int64_t>(Apply("truncate[10]", T(TypeId::kLong), int64_t{10})), 10);
  EXPECT_EQ(std::get<DecimalValue>(Apply("truncate[50]", Type::Decimal(9, 2), DecimalValue{1065}))
                .unscaled,
            1050);
  EXPECT_EQ(std::get<std::string>(Apply("truncate[3]", T(TypeId::kString), std::string("iceberg"))),
            "ice");
  // Code points, not bytes: "é" is two bytes.
  EXPECT_EQ(std::get<std::string>(Apply("truncate[2]", T(TypeId::kString), std::string("éte"))),
            "ét");
  EXPECT_EQ(std::get<std::string>(
                Apply("truncate[3]", T(TypeId::kBinary), std::string("\x01\x02\x03\x04\x05"))),
            "\x01\x02\x03");
}

TEST(IcebergTransform, TimeTransformsCountFromTheEpoch) {
  const Type ts = T(TypeId::kTimestampTz);
  const int64_t t = Micros(2017, 11, 16, 22, 31, 8);
  EXPECT_EQ(std::get<int32_t>(Apply("year", ts, t)), 47);
  EXPECT_EQ(std::get<int32_t>(Apply("month", ts, t)), 47 * 12 + 10);
  EXPECT_EQ(std::get<int32_t>(Apply("day", ts, t)), 17486);
  EXPECT_EQ(std::get<int32_t>(Apply("hour", ts, t)), 17486 * 24 + 22);
  // Before the epoch the ordinals floor: one microsecond before 1970 is day -1, hour -1.
  EXPECT_EQ(std::get<int32_t>(Apply("day", ts, int64_t{-1})), -1);
  EXPECT_EQ(std::get<int32_t>(Apply("hour", ts, int64_t{-1})), -1);
  EXPECT_EQ(std::get<int32_t>(Apply("month", ts, int64_t{-1})), -1);
  EXPECT_EQ(std::get<int32_t>(Apply("year", ts, int64_t{-1})), -1);
  EXPECT_EQ(std::get<int32_t>(Apply("month", T(TypeId::kDate), int32_t{17486})), 574);
  EXPECT_TRUE(IsNull(Apply("day", ts, Value())));
  EXPECT_TRUE(IsNull(Apply("void", T(TypeId::kLong), int64_t{3})));
}

TEST(IcebergTransform, ParsingRefusesUnknownTransformsAndNonPositiveParameters) {
  EXPECT_EQ(Transform::Parse(" bucket[ 16 ] ")->ToString(), "bucket[16]");
  EXPECT_EQ(Transform::Parse("truncate[4]")->parameter, 4);
  const Status unknown = Transform::Parse("week").status();
  EXPECT_NE(unknown.message().find("unknown transform \"week\""), std::string::npos)
      << unknown.message();
  const Status zero = Transform::Parse("bucket[0]").status();
  EXPECT_NE(zero.message().find("bucket count must be positive"), std::string::npos)
      << zero.message();
  EXPECT_FALSE(Transform::Parse("truncate[-3]").ok());
  EXPECT_FALSE(Transform::Parse("bucket[x]").ok());
  EXPECT_FALSE(Transform::Parse("bucket[99999999999]").ok());
  // Another engine's transform is kept when reading metadata, but cannot be written.
  ASSERT_OK_AND_ASSIGN(const Transform zorder, Transform::ParseFromMetadata("zorder"));
  EXPECT_EQ(zorder.kind, TransformKind::kUnknown);
  EXPECT_EQ(zorder.ToString(), "zorder");
  EXPECT_FALSE(zorder.ResultType(T(TypeId::kLong)).ok());
  EXPECT_FALSE(Transform::Parse("day")->ResultType(T(TypeId::kString)).ok());
  EXPECT_FALSE(Transform::Parse("hour")->ResultType(T(TypeId::kDate)).ok());
}

TEST(IcebergPartitionPath, WritesHumanValuesEscapedAsJavaDoes) {
  const Schema schema(0, {NestedField{1, "id", true, T(TypeId::kLong), {}},
                          NestedField{2, "name", false, T(TypeId::kString), {}},
                          NestedField{3, "ts", false, T(TypeId::kTimestampTz), {}}});
  PartitionSpec spec;
  spec.fields = {{3, 1000, "ts_day", *Transform::Parse("day")},
                 {3, 1001, "ts_hour", *Transform::Parse("hour")},
                 {3, 1002, "ts_month", *Transform::Parse("month")},
                 {3, 1003, "ts_year", *Transform::Parse("year")},
                 {1, 1004, "id_bucket", *Transform::Parse("bucket[16]")},
                 {2, 1005, "name", Transform::Identity()},
                 {3, 1006, "ts", Transform::Identity()}};
  const int64_t t = Micros(2026, 12, 1, 10, 0, 0);
  ASSERT_OK_AND_ASSIGN(
      const std::vector<Value> tuple,
      PartitionTuple(spec, schema, {t, t, t, t, int64_t{34}, std::string("a b/c&é"), t}));
  ASSERT_OK_AND_ASSIGN(const std::string path, PartitionPath(spec, schema, tuple));
  EXPECT_EQ(path,
            "ts_day=2026-12-01/ts_hour=2026-12-01-10/ts_month=2026-12/ts_year=2026/"
            "id_bucket=3/name=a+b%2Fc%26%C3%A9/ts=2026-12-01T10%3A00Z");
  ASSERT_OK_AND_ASSIGN(const std::string nulls, PartitionPath(spec, schema, std::vector<Value>(7)));
  EXPECT_EQ(nulls.substr(0, 24), "ts_day=null/ts_hour=null");
}

TEST(IcebergBinaryValue, RoundTripsEveryPrimitiveAsAppendixDSays) {
  const std::vector<std::pair<Type, Value>> cases = {
      {T(TypeId::kBoolean), true},
      {T(TypeId::kInt), int32_t{-7}},
      {T(TypeId::kLong), int64_t{1} << 40},
      {T(TypeId::kFloat), 1.5f},
      {T(TypeId::kDouble), -0.25},
      {T(TypeId::kDate), int32_t{17486}},
      {T(TypeId::kTimestampTz), Micros(2017, 11, 16, 22, 31, 8, 1)},
      {T(TypeId::kString), std::string("iceberg")},
      {T(TypeId::kUuid), TestUuid()},
      {T(TypeId::kBinary), std::string("\x00\xff", 2)},
      {Type::Fixed(2), std::string("\x00\xff", 2)},
      {Type::Decimal(9, 2), DecimalValue{-129}},
  };
  for (const auto& [type, value] : cases) {
    ASSERT_OK_AND_ASSIGN(const std::string bytes, ToBinary(value, type));
    ASSERT_OK_AND_ASSIGN(const Value back, FromBinary(bytes, type));
    EXPECT_EQ(back, value) << ToString(type);
  }
  EXPECT_EQ(*ToBinary(int32_t{1}, T(TypeId::kInt)), std::string("\x01\x00\x00\x00", 4));
  EXPECT_EQ(*ToBinary(int64_t{1}, T(TypeId::kLong)), std::string("\x01\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(*ToBinary(1.0, T(TypeId::kDouble)), std::string("\0\0\0\0\0\0\xf0\x3f", 8));
  EXPECT_EQ(*ToBinary(DecimalValue{-129}, Type::Decimal(9, 2)), std::string("\xff\x7f", 2));
  EXPECT_EQ(*ToBinary(TestUuid(), T(TypeId::kUuid)),
            std::string("\xF7\x9C\x3E\x09\x67\x7C\x4B\xBD\xA4\x79\x3F\x34\x9C\xB7\x85\xE7", 16));
  // An int bound read as a long (after int → long promotion) widens.
  ASSERT_OK_AND_ASSIGN(const Value widened,
                       FromBinary(std::string("\xff\xff\xff\xff", 4), T(TypeId::kLong)));
  EXPECT_EQ(std::get<int64_t>(widened), -1);
  EXPECT_FALSE(FromBinary("abc", T(TypeId::kInt)).ok());
}

}  // namespace
}  // namespace weir::lake::iceberg
