#include "records/mapped_batch_builder.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include "records/dataset_mapping.h"

namespace weir::records {
namespace {

std::unique_ptr<MappedBatchBuilder> Make(const std::map<std::string, std::string>& columns,
                                         decode::DecodeOptions options = {}) {
  auto mapping = CompileDatasetMapping(columns);
  EXPECT_TRUE(mapping.ok()) << mapping.status().ToString();
  auto builder = MappedBatchBuilder::Make(*mapping, options, arrow::default_memory_pool());
  EXPECT_TRUE(builder.ok()) << builder.status().ToString();
  return std::move(*builder);
}

// The batch's column as text, "null" for nulls.
std::vector<std::string> Column(const arrow::RecordBatch& batch, const std::string& name) {
  const auto array = batch.GetColumnByName(name);
  EXPECT_NE(array, nullptr) << name;
  std::vector<std::string> out;
  if (array == nullptr) return out;
  for (int64_t i = 0; i < array->length(); ++i) {
    if (array->IsNull(i)) {
      out.push_back("null");
    } else if (array->type_id() == arrow::Type::STRING) {
      out.emplace_back(static_cast<const arrow::StringArray&>(*array).GetView(i));
    } else {
      out.push_back(array->GetScalar(i).ValueOrDie()->ToString());
    }
  }
  return out;
}

TEST(MappedBatchBuilder, EachResultLandsInItsColumnWithTheInferredType) {
  auto builder = Make({{"event", "event"},
                       {"browser", "properties.\"$browser\""},
                       {"flags", "join(',', properties.flags)"},
                       {"n_flags", "length(properties.flags)"},
                       {"geo", "properties.{city: city, country: country}"},
                       {"revenue", "properties.revenue"},
                       {"paid", "properties.revenue > `10`"},
                       {"first", "properties.flags[0]"}});
  ASSERT_TRUE(builder
                  ->Append(R"({"event":"buy","properties":{"$browser":"Firefox","flags":["a","b"],
                      "city":"Oslo","country":"NO","revenue":12.5}})")
                  .ok());
  ASSERT_TRUE(builder->Append(R"({"event":"view","properties":{"flags":[],"revenue":3}})").ok());
  // Any JSON value is mapped: on an array every field is null, and join(null) fails (columns
  // are evaluated in name order; the first failure names its column).
  const Status array = builder->Append(R"([1, 2])");
  ASSERT_FALSE(array.ok());
  EXPECT_EQ(GetErrorDetail(array)->code(), "mapping_failed");
  EXPECT_NE(array.message().find("mapping column flags (join(',', properties.flags))"),
            std::string::npos)
      << array.message();
  EXPECT_FALSE(builder->Append(R"({"event":"idle"})").ok());  // length(null) again
  EXPECT_EQ(builder->num_rows(), 2);
  auto batch = builder->Finish();
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  const auto& b = **batch;
  std::vector<std::string> names;
  for (const auto& field : b.schema()->fields()) names.push_back(field->name());
  EXPECT_EQ(names, (std::vector<std::string>{"browser", "event", "first", "flags", "geo", "n_flags",
                                             "paid", "revenue"}));
  EXPECT_EQ(b.GetColumnByName("n_flags")->type()->id(), arrow::Type::INT64);
  EXPECT_EQ(b.GetColumnByName("paid")->type()->id(), arrow::Type::BOOL);
  EXPECT_EQ(b.GetColumnByName("revenue")->type()->id(), arrow::Type::DOUBLE);  // 12.5 then 3
  EXPECT_EQ(b.GetColumnByName("geo")->type()->id(), arrow::Type::STRING);
  EXPECT_EQ(Column(b, "event"), (std::vector<std::string>{"buy", "view"}));
  EXPECT_EQ(Column(b, "browser"), (std::vector<std::string>{"Firefox", "null"}));
  EXPECT_EQ(Column(b, "flags"), (std::vector<std::string>{"a,b", ""}));
  EXPECT_EQ(Column(b, "n_flags"), (std::vector<std::string>{"2", "0"}));
  EXPECT_EQ(Column(b, "geo"), (std::vector<std::string>{R"({"city":"Oslo","country":"NO"})",
                                                        R"({"city":null,"country":null})"}));
  EXPECT_EQ(Column(b, "revenue"), (std::vector<std::string>{"12.5", "3"}));
  EXPECT_EQ(Column(b, "paid"), (std::vector<std::string>{"true", "false"}));
  EXPECT_EQ(Column(b, "first"), (std::vector<std::string>{"a", "null"}));
  EXPECT_EQ(builder->stats().records, 2);
  EXPECT_EQ(builder->stats().rejected.at("mapping_failed"), 2);
}

TEST(MappedBatchBuilder, MixedKindsPromoteAsUnmappedDecodingDoes) {
  auto builder = Make({{"v", "v"}});
  for (const char* record : {R"({"v":1})", R"({"v":2.5})", R"({"v":true})", R"({"v":[1,{"a":2}]})",
                             R"({"v":null})", R"({"v":18446744073709551615})"}) {
    ASSERT_TRUE(builder->Append(record).ok()) << record;
  }
  auto batch = builder->Finish();
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ((*batch)->column(0)->type()->id(), arrow::Type::STRING);
  EXPECT_EQ(Column(**batch, "v"), (std::vector<std::string>{"1", "2.5", "true", R"([1,{"a":2}])",
                                                            "null", "18446744073709551616"}));
  EXPECT_EQ(builder->stats().lossy_integers, 1);
}

TEST(MappedBatchBuilder, ARecordThatCannotBeMappedIsRejectedWithItsReasonAndAppendsNothing) {
  decode::DecodeOptions options;
  options.max_record_bytes = 64;
  auto builder = Make({{"a", "a"}, {"n", "length(b)"}}, options);
  ASSERT_TRUE(builder->Append(R"({"a":"x","b":"abc"})").ok());
  struct Case {
    std::string record, reason, message;
  };
  const std::vector<Case> cases = {
      {R"({"a":"y","b":5})", "mapping_failed", "mapping column n (length(b))"},
      {R"({"a":"y",)", "invalid_json", "invalid JSON"},
      {"{\"a\":\"\xff\"}", "invalid_utf8", "invalid UTF-8"},
      {"{\"a\":\"" + std::string(80, 'x') + "\"}", "record_too_large", "more than 64"},
  };
  for (const Case& c : cases) {
    const Status status = builder->Append(c.record);
    ASSERT_FALSE(status.ok()) << c.record;
    EXPECT_EQ(ClassOf(status), ErrorClass::kBadData);
    ASSERT_NE(GetErrorDetail(status), nullptr);
    EXPECT_EQ(GetErrorDetail(status)->code(), c.reason);
    EXPECT_NE(status.message().find(c.message), std::string::npos) << status.message();
  }
  ASSERT_TRUE(builder->Append(R"({"a":"z","b":[1,2]})").ok());
  auto batch = builder->Finish();
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(Column(**batch, "a"), (std::vector<std::string>{"x", "z"}));
  EXPECT_EQ(Column(**batch, "n"), (std::vector<std::string>{"3", "2"}));
  const auto& rejected = builder->stats().rejected;
  EXPECT_EQ(rejected, (std::map<std::string, int64_t>{{"invalid_json", 1},
                                                      {"invalid_utf8", 1},
                                                      {"mapping_failed", 1},
                                                      {"record_too_large", 1}}));
  EXPECT_EQ(builder->stats().records, 2);
}

TEST(MappedBatchBuilder, FinishStartsANewBatchWithFreshKinds) {
  auto builder = Make({{"v", "v"}});
  ASSERT_TRUE(builder->Append(R"({"v":"text"})").ok());
  auto first = builder->Finish();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)->column(0)->type()->id(), arrow::Type::STRING);
  ASSERT_TRUE(builder->Append(R"({"v":7})").ok());
  auto second = builder->Finish();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*second)->num_rows(), 1);
  EXPECT_EQ((*second)->column(0)->type()->id(), arrow::Type::INT64);
  auto empty = builder->Finish();
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)->num_rows(), 0);
  EXPECT_EQ((*empty)->num_columns(), 1);
}

}  // namespace
}  // namespace weir::records
