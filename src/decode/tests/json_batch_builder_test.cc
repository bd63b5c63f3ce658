#include "decode/json_batch_builder.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace weir::decode {
namespace {

std::unique_ptr<JsonBatchBuilder> MakeBuilder(DecodeOptions options = {}) {
  auto builder = JsonBatchBuilder::Make(options, arrow::default_memory_pool());
  EXPECT_TRUE(builder.ok()) << builder.status().ToString();
  return std::move(*builder);
}

std::shared_ptr<arrow::RecordBatch> Decode(JsonBatchBuilder& builder,
                                           const std::vector<std::string>& records) {
  for (const auto& record : records) {
    const Status status = builder.Append(record);
    EXPECT_TRUE(status.ok()) << record << ": " << status.ToString();
  }
  auto batch = builder.Finish();
  EXPECT_TRUE(batch.ok()) << batch.status().ToString();
  return *batch;
}

// The batch's column as text lines, "null" for nulls, for exact comparisons.
std::vector<std::string> Column(const arrow::RecordBatch& batch, const std::string& name) {
  const auto array = batch.GetColumnByName(name);
  EXPECT_NE(array, nullptr) << name;
  std::vector<std::string> values;
  if (array == nullptr) return values;
  for (int64_t i = 0; i < array->length(); ++i) {
    if (array->IsNull(i)) {
      values.push_back("null");
    } else if (array->type_id() == arrow::Type::STRING) {
      values.push_back(std::string(static_cast<const arrow::StringArray&>(*array).GetView(i)));
    } else {
      values.push_back((*array->GetScalar(i))->ToString());
    }
  }
  return values;
}

std::string RejectReason(const Status& status) {
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(ClassOf(status), ErrorClass::kBadData) << status.ToString();
  const ErrorDetail* detail = GetErrorDetail(status);
  return detail == nullptr ? "" : detail->code();
}

TEST(JsonBatchBuilderTest, InfersEachTypeAndKeepsFirstSeenColumnOrder) {
  auto builder = MakeBuilder();
  const auto batch = Decode(
      *builder, {
                    R"({"id": 1, "score": 0.5, "ok": true, "name": "a\"b\u00e9", "none": null,
          "props": {"k": [1, 2, {"x": "y"}]}, "list": [ 1 , "two" ]})",
                    R"({"id": -9223372036854775808, "score": -1e3, "ok": false, "name": ""})",
                });
  ASSERT_EQ(batch->num_rows(), 2);
  const auto& schema = *batch->schema();
  ASSERT_EQ(schema.num_fields(), 7);
  const std::vector<std::pair<std::string, std::shared_ptr<arrow::DataType>>> expected = {
      {"id", arrow::int64()},  {"score", arrow::float64()}, {"ok", arrow::boolean()},
      {"name", arrow::utf8()}, {"none", arrow::utf8()},     {"props", arrow::utf8()},
      {"list", arrow::utf8()}};
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(schema.field(i)->name(), expected[i].first);
    EXPECT_TRUE(schema.field(i)->type()->Equals(expected[i].second)) << expected[i].first;
  }
  EXPECT_EQ(Column(*batch, "id"), (std::vector<std::string>{"1", "-9223372036854775808"}));
  EXPECT_EQ(Column(*batch, "score"), (std::vector<std::string>{"0.5", "-1000"}));
  EXPECT_EQ(Column(*batch, "ok"), (std::vector<std::string>{"true", "false"}));
  EXPECT_EQ(Column(*batch, "name"), (std::vector<std::string>{"a\"b\xC3\xA9", ""}));
  EXPECT_EQ(Column(*batch, "none"), (std::vector<std::string>{"null", "null"}));
  EXPECT_EQ(Column(*batch, "props"),
            (std::vector<std::string>{R"({"k": [1, 2, {"x": "y"}]})", "null"}));
  EXPECT_EQ(Column(*batch, "list"), (std::vector<std::string>{R"([ 1 , "two" ])", "null"}));
}

TEST(JsonBatchBuilderTest, MissingAndLateColumnsAreNull) {
  auto builder = MakeBuilder();
  const auto batch = Decode(*builder, {R"({"a":1})", R"({"b":"x"})", R"({"a":3,"b":"z"})", "{}"});
  ASSERT_EQ(batch->num_rows(), 4);
  EXPECT_EQ(Column(*batch, "a"), (std::vector<std::string>{"1", "null", "3", "null"}));
  EXPECT_EQ(Column(*batch, "b"), (std::vector<std::string>{"null", "x", "z", "null"}));
}

TEST(JsonBatchBuilderTest, PromotionIntToDoubleToVarcharWhateverTheOrder) {
  auto builder = MakeBuilder();
  const auto batch =
      Decode(*builder, {R"({"v":1,"w":2.5,"x":true})", R"({"v":2.5,"w":3})", R"({"v":"s","x":7})",
                        R"({"v":{"o":1}})", R"({"v":null,"w":1e300})"});
  EXPECT_TRUE(batch->GetColumnByName("v")->type()->Equals(arrow::utf8()));
  EXPECT_EQ(Column(*batch, "v"), (std::vector<std::string>{"1", "2.5", "s", R"({"o":1})", "null"}));
  EXPECT_TRUE(batch->GetColumnByName("w")->type()->Equals(arrow::float64()));
  EXPECT_EQ(Column(*batch, "w"), (std::vector<std::string>{"2.5", "3", "null", "null", "1e+300"}));
  EXPECT_TRUE(batch->GetColumnByName("x")->type()->Equals(arrow::utf8()));
  EXPECT_EQ(Column(*batch, "x"), (std::vector<std::string>{"true", "null", "7", "null", "null"}));

  // The same values in another order give the same types.
  auto reversed = MakeBuilder();
  const auto other =
      Decode(*reversed, {R"({"v":null,"w":1e300})", R"({"v":{"o":1}})", R"({"v":"s","x":7})",
                         R"({"v":2.5,"w":3})", R"({"v":1,"w":2.5,"x":true})"});
  for (const char* name : {"v", "w", "x"}) {
    EXPECT_TRUE(other->GetColumnByName(name)->type()->Equals(batch->GetColumnByName(name)->type()))
        << name;
  }
}

TEST(JsonBatchBuilderTest, RejectsUndecodableRecordsWithTheirReasonAndKeepsTheRest) {
  DecodeOptions options;
  options.max_record_bytes = 64;
  auto builder = MakeBuilder(options);
  EXPECT_TRUE(builder->Append(R"({"id":1,"s":"ok"})").ok());
  EXPECT_EQ(RejectReason(builder->Append(R"({"id":2,"s":)")), "invalid_json");
  EXPECT_EQ(RejectReason(builder->Append(R"({"id":3} trailing)")), "invalid_json");
  EXPECT_EQ(RejectReason(builder->Append(R"({"id":4,"n":NaN})")), "invalid_json");
  EXPECT_EQ(RejectReason(builder->Append(R"({"id":5,"n":Infinity})")), "invalid_json");
  EXPECT_EQ(RejectReason(builder->Append(R"({"id":6,"deep":{"a":[1,tru]}})")), "invalid_json");
  EXPECT_EQ(RejectReason(builder->Append("[1,2,3]")), "not_an_object");
  EXPECT_EQ(RejectReason(builder->Append("\"just a string\"")), "not_an_object");
  EXPECT_EQ(RejectReason(builder->Append("{\"s\":\"\xC3\x28\"}")), "invalid_utf8");
  EXPECT_EQ(RejectReason(builder->Append("{\"s\":\"" + std::string(100, 'x') + "\"}")),
            "record_too_large");
  EXPECT_EQ(RejectReason(builder->Append("")), "invalid_json");
  EXPECT_TRUE(builder->Append(R"({"id":7,"s":"fine"})").ok());

  const auto& stats = builder->stats();
  EXPECT_EQ(stats.records, 2);
  EXPECT_EQ(stats.rejected, (std::map<std::string, int64_t>{{"invalid_json", 6},
                                                            {"not_an_object", 2},
                                                            {"invalid_utf8", 1},
                                                            {"record_too_large", 1}}));
  auto batch = builder->Finish();
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(Column(**batch, "id"), (std::vector<std::string>{"1", "7"}));
  EXPECT_EQ((*batch)->num_columns(), 2) << "a rejected record adds no column";
}

TEST(JsonBatchBuilderTest, ARejectedRecordLeavesNoColumnEvenWhenItsFieldsWereParsed) {
  auto builder = MakeBuilder();
  EXPECT_TRUE(builder->Append(R"({"seq":1})").ok());
  EXPECT_EQ(RejectReason(builder->Append(R"({"phantom": 1}{"b": 2})")), "invalid_json");
  EXPECT_TRUE(builder->Append(R"({"seq":2,"phantom":7})").ok());
  auto batch = builder->Finish();
  ASSERT_TRUE(batch.ok());
  ASSERT_EQ((*batch)->num_columns(), 2);
  EXPECT_EQ((*batch)->schema()->field(1)->name(), "phantom");
  EXPECT_EQ((*batch)->schema()->field(1)->type()->id(), arrow::Type::INT64)
      << "the rejected record's field did not shape the column";
  EXPECT_EQ(Column(**batch, "phantom"), (std::vector<std::string>{"null", "7"}));
}

// Property: valid records interleaved with records of every reject reason make the same batch
// as the valid records alone (schema, column order, types and values).
TEST(JsonBatchBuilderTest, RejectedRecordsInterleavedAnywhereChangeNothingInTheBatch) {
  DecodeOptions options;
  options.max_record_bytes = 200;
  std::mt19937 random(20261206);
  const std::vector<std::string> keys = {"a", "b", "A", "c_d", "e", "f", "g"};
  const auto value = [&](std::mt19937& r) -> std::string {
    switch (r() % 5) {
      case 0:
        return std::to_string(static_cast<int>(r() % 1000));
      case 1:
        return std::to_string(r() % 1000) + ".5";
      case 2:
        return "\"s" + std::to_string(r() % 100) + "\"";
      case 3:
        return r() % 2 ? "true" : "false";
      default:
        return "null";
    }
  };
  const auto valid = [&](std::mt19937& r) {
    std::string record = "{";
    const int fields = 1 + static_cast<int>(r() % 4);
    for (int i = 0; i < fields; ++i) {
      if (i > 0) record += ",";
      record += "\"" + keys[r() % keys.size()] + "\":" + value(r);
    }
    return record + "}";
  };
  // Each reject carries fields (new names and known ones with other kinds) before its fault.
  const auto reject = [&](std::mt19937& r) {
    const std::string fields = "\"phantom" + std::to_string(r() % 3) + "\":" + value(r) + ",\"" +
                               keys[r() % keys.size()] + "\":\"text\"";
    switch (r() % 7) {
      case 0:
        return "{" + fields + "}{\"b\":2}";  // content after the object
      case 1:
        return "{" + fields + ",\"x\":";  // truncated
      case 2:
        return "{" + fields + ",\"n\":NaN}";  // not JSON
      case 3:
        return "{" + fields + ",\"s\":\"\xC3\x28\"}";  // invalid UTF-8
      case 4:
        return "{" + fields + ",\"big\":\"" + std::string(300, 'x') + "\"}";  // too large
      case 5:
        return "{" + fields + ",\"deep\":{\"a\":[1,tru]}}";  // bad nested value
      default:
        return std::string("[1,2,3]");  // not an object
    }
  };
  for (int round = 0; round < 50; ++round) {
    std::vector<std::string> good;
    std::vector<std::string> mixed;
    const int n = 1 + static_cast<int>(random() % 30);
    for (int i = 0; i < n; ++i) {
      while (random() % 3 == 0) mixed.push_back(reject(random));
      good.push_back(valid(random));
      mixed.push_back(good.back());
    }
    while (random() % 2 == 0) mixed.push_back(reject(random));
    auto alone = MakeBuilder(options);
    auto expected = Decode(*alone, good);
    auto interleaved = MakeBuilder(options);
    int64_t rejected = 0;
    for (const auto& record : mixed) {
      if (!interleaved->Append(record).ok()) ++rejected;
    }
    EXPECT_EQ(rejected, static_cast<int64_t>(mixed.size() - good.size()));
    auto got = interleaved->Finish();
    ASSERT_TRUE(got.ok());
    ASSERT_TRUE((*got)->schema()->Equals(*expected->schema()))
        << "round " << round << ": " << (*got)->schema()->ToString() << " vs "
        << expected->schema()->ToString();
    ASSERT_TRUE((*got)->Equals(*expected)) << "round " << round;
  }
}

TEST(JsonBatchBuilderTest, TopLevelStringsAreUnescapedNestedOnesKeptAndBadEscapesRejected) {
  // Nested values keep their text as the record has it, yet every string in them is checked:
  // a bad escape or an unescaped control character anywhere rejects the record.
  auto builder = MakeBuilder();
  const auto batch = Decode(
      *builder,
      {R"({"s":"plain","p":{"q":"x y","r":["a",1]}})",
       R"({"s":"quote \" and \\ and \n and \u00e9 and \ud83d\ude00" ,"p":{"q":"\u00e9 \"q\""}})",
       R"({"s":"","p":{}})", R"({"s" : "spaced"  , "p":  {"q" :"w"  }  })"});
  EXPECT_EQ(
      Column(*batch, "s"),
      (std::vector<std::string>{"plain", "quote \" and \\ and \n and \xC3\xA9 and \xF0\x9F\x98\x80",
                                "", "spaced"}));
  EXPECT_EQ(Column(*batch, "p"),
            (std::vector<std::string>{R"({"q":"x y","r":["a",1]})", R"({"q":"\u00e9 \"q\""})", "{}",
                                      R"({"q" :"w"  })"}));

  const std::vector<std::string> bad = {
      R"({"s":"bad \x escape"})", R"({"p":{"q":"bad \x escape"}})",
      R"({"p":["\ud83d"]})",      R"({"s":"\u12"})",
      "{\"s\":\"a\x01b\"}",       "{\"p\":{\"q\":\"a\x1f\"}}"};
  for (const std::string& record : bad) {
    EXPECT_EQ(RejectReason(builder->Append(record)), "invalid_json") << record;
  }
  EXPECT_EQ(builder->stats().rejected,
            (std::map<std::string, int64_t>{{"invalid_json", static_cast<int64_t>(bad.size())}}));
}

TEST(JsonBatchBuilderTest, DropsBadFieldNamesPerColumnAndCountsThem) {
  DecodeOptions options;
  options.max_field_name_length = 10;
  auto builder = MakeBuilder(options);
  const auto batch =
      Decode(*builder, {R"({"id":1,"utm-source":"x","_inserted_at":"t","abcdefghijk":1,"id":2})",
                        R"({"id":3,"utm-source":"y"})"});
  ASSERT_EQ(batch->num_columns(), 1);
  EXPECT_EQ(Column(*batch, "id"), (std::vector<std::string>{"1", "3"})) << "first key wins";
  EXPECT_EQ(
      builder->stats().dropped_fields,
      (std::map<std::string, int64_t>{
          {"duplicate_key", 1}, {"invalid_name", 2}, {"name_too_long", 1}, {"reserved_name", 1}}));
}

TEST(JsonBatchBuilderTest, CaseVariantsOfOneRecordKeepTheFirstAndCountTheRest) {
  auto builder = MakeBuilder();
  const auto batch = Decode(*builder, {R"({"seq":1,"Case":1,"case":2,"CASE":3})",
                                       R"({"seq":2,"Seq":9,"_inserted_AT":"x"})"});
  ASSERT_EQ(batch->num_columns(), 2);
  EXPECT_EQ(Column(*batch, "seq"), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(Column(*batch, "Case"), (std::vector<std::string>{"1", "null"}));
  EXPECT_EQ(builder->stats().dropped_fields,
            (std::map<std::string, int64_t>{{"duplicate_name", 3}, {"reserved_name", 1}}));
  EXPECT_EQ(builder->stats().field_events, 4);
  EXPECT_EQ(builder->last_field_event().reason, "reserved_name");
  EXPECT_EQ(builder->last_field_event().key, "_inserted_AT");
}

TEST(JsonBatchBuilderTest, SpellingsOfOneNameAcrossRecordsKeepTheirOwnColumns) {
  // The writer resolves them onto one table column (ingest/column_plan.h).
  auto builder = MakeBuilder();
  const auto batch = Decode(*builder, {R"({"Name":"a"})", R"({"name":"b"})"});
  ASSERT_EQ(batch->num_columns(), 2);
  EXPECT_EQ(Column(*batch, "Name"), (std::vector<std::string>{"a", "null"}));
  EXPECT_EQ(Column(*batch, "name"), (std::vector<std::string>{"null", "b"}));
  EXPECT_TRUE(builder->stats().dropped_fields.empty());
}

TEST(JsonBatchBuilderTest, DuckLakeNamesAreDroppedOrRenamedNeverPassedOn) {
  auto builder = MakeBuilder();
  const auto batch =
      Decode(*builder, {R"({"id":1,"_ducklake_internal_snapshot_id":5,"_DuckLake_Internal_x":6,)"
                        R"("row_id":7,"Begin_Snapshot":8,"end_snapshot":9,"row_id_":10})"});
  std::vector<std::string> names;
  for (const auto& field : batch->schema()->fields()) names.push_back(field->name());
  EXPECT_EQ(names, (std::vector<std::string>{"id", "row_id_", "Begin_Snapshot_", "end_snapshot_"}));
  EXPECT_EQ(Column(*batch, "row_id_"), (std::vector<std::string>{"7"})) << "the first key wins";
  EXPECT_EQ(builder->stats().dropped_fields,
            (std::map<std::string, int64_t>{{"duplicate_key", 1}, {"reserved_name", 2}}));
  EXPECT_EQ(builder->stats().renamed_fields,
            (std::map<std::string, int64_t>{{"reserved_name", 3}}));
}

TEST(JsonBatchBuilderTest, ARejectedRecordCountsNoFieldEvent) {
  auto builder = MakeBuilder();
  ASSERT_FALSE(builder->Append(R"({"a-b":1,"x":)").ok());
  EXPECT_EQ(builder->stats().field_events, 0);
  EXPECT_TRUE(builder->stats().dropped_fields.empty());
}

TEST(JsonBatchBuilderTest, IntegersBeyondInt64BecomeDoublesAndAreCounted) {
  auto builder = MakeBuilder();
  const auto batch =
      Decode(*builder, {R"({"n":9223372036854775807})", R"({"n":18446744073709551615})"});
  EXPECT_TRUE(batch->GetColumnByName("n")->type()->Equals(arrow::float64()));
  const auto& n = static_cast<const arrow::DoubleArray&>(*batch->GetColumnByName("n"));
  EXPECT_EQ(n.Value(0), 9223372036854775807.0);
  EXPECT_EQ(n.Value(1), 18446744073709551615.0);
  EXPECT_EQ(builder->stats().lossy_integers, 1);
}

TEST(JsonBatchBuilderTest, FinishStartsAFreshBatchWithFreshTypes) {
  auto builder = MakeBuilder();
  auto first = Decode(*builder, {R"({"a":"text"})"});
  auto second = Decode(*builder, {R"({"a":1})", R"({"b":true})"});
  EXPECT_TRUE(first->GetColumnByName("a")->type()->Equals(arrow::utf8()));
  EXPECT_TRUE(second->GetColumnByName("a")->type()->Equals(arrow::int64()));
  EXPECT_EQ(second->num_rows(), 2);
  EXPECT_EQ(builder->stats().records, 3);
  EXPECT_EQ(builder->num_rows(), 0);
}

TEST(JsonBatchBuilderTest, KeyOrderChangesDoNotMixUpColumns) {
  auto builder = MakeBuilder();
  std::vector<std::string> records;
  for (int i = 0; i < 100; ++i) {
    records.push_back(
        i % 2 == 0 ? R"({"x":)" + std::to_string(i) + R"(,"y":"e)" + std::to_string(i) + "\"}"
                   : R"({"y":"o)" + std::to_string(i) + R"(","x":)" + std::to_string(i) + "}");
  }
  const auto batch = Decode(*builder, records);
  const auto x = Column(*batch, "x");
  const auto y = Column(*batch, "y");
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(x[i], std::to_string(i));
    EXPECT_EQ(y[i], (i % 2 == 0 ? "e" : "o") + std::to_string(i));
  }
}

// Counts allocations and reallocations (each a copy, or fresh pages, when a buffer grows).
class CountingPool final : public arrow::MemoryPool {
 public:
  using arrow::MemoryPool::Allocate;
  using arrow::MemoryPool::Free;
  using arrow::MemoryPool::Reallocate;
  arrow::Status Allocate(int64_t size, int64_t alignment, uint8_t** out) override {
    ++calls_;
    return base_->Allocate(size, alignment, out);
  }
  arrow::Status Reallocate(int64_t old_size, int64_t new_size, int64_t alignment,
                           uint8_t** ptr) override {
    if (new_size > old_size) ++calls_;
    return base_->Reallocate(old_size, new_size, alignment, ptr);
  }
  void Free(uint8_t* buffer, int64_t size, int64_t alignment) override {
    base_->Free(buffer, size, alignment);
  }
  int64_t bytes_allocated() const override { return base_->bytes_allocated(); }
  int64_t total_bytes_allocated() const override { return base_->total_bytes_allocated(); }
  int64_t num_allocations() const override { return calls_; }
  std::string backend_name() const override { return "counting"; }

 private:
  arrow::MemoryPool* base_ = arrow::default_memory_pool();
  int64_t calls_ = 0;
};

TEST(JsonBatchBuilderTest, TheNextBatchReservesWhatTheLastReachedInsteadOfGrowing) {
  CountingPool pool;
  auto made = JsonBatchBuilder::Make({}, &pool);
  ASSERT_TRUE(made.ok());
  auto& builder = **made;
  auto fill = [&](int rows) {
    for (int i = 0; i < rows; ++i) {
      ASSERT_TRUE(builder
                      .Append(R"({"id": )" + std::to_string(i) +
                              R"(, "name": "a name of some length", "properties": {"a": [1, 2]}})")
                      .ok());
    }
  };
  fill(20000);
  const int64_t growing = pool.num_allocations();
  auto first = builder.Finish();
  ASSERT_TRUE(first.ok());
  first->reset();
  fill(20000);
  const int64_t reserved = pool.num_allocations() - growing;
  auto second = builder.Finish();
  ASSERT_TRUE(second.ok());
  ASSERT_EQ((*second)->num_rows(), 20000);
  EXPECT_EQ(Column(**second, "id")[19999], "19999");
  EXPECT_EQ(Column(**second, "properties")[0], R"({"a": [1, 2]})");
  // Growing from nothing reallocates each buffer a dozen times; reserved, each is allocated
  // once (3 columns: validity and values, and the strings' offsets and data).
  EXPECT_GT(growing, 30);
  EXPECT_LE(reserved, 12) << "grown from nothing: " << growing;
}

TEST(JsonBatchBuilderTest, AColumnOfTheLastBatchMissingFromTheNextLeavesNoTrace) {
  auto builder = MakeBuilder();
  Decode(*builder, {R"({"a": 1, "b": "x"})", R"({"a": 2, "b": "y"})"});
  const auto batch = Decode(*builder, {R"({"a": "text"})"});
  ASSERT_EQ(batch->num_columns(), 1);
  EXPECT_EQ(Column(*batch, "a"), (std::vector<std::string>{"text"}));
}

TEST(JsonBatchBuilderTest, RejectsBadOptions) {
  DecodeOptions options;
  options.max_record_bytes = 0;
  EXPECT_TRUE(JsonBatchBuilder::Make(options, arrow::default_memory_pool()).status().IsInvalid());
}

}  // namespace
}  // namespace weir::decode
