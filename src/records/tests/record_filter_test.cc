#include "records/record_filter.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include "decode/json_batch_builder.h"
#include "records/filter_values.h"
#include "records/typed_text.h"

namespace weir::records {
namespace {

std::shared_ptr<arrow::RecordBatch> Decode(const std::vector<std::string>& records) {
  auto builder = *decode::JsonBatchBuilder::Make({}, arrow::default_memory_pool());
  for (const auto& record : records) EXPECT_TRUE(builder->Append(record).ok()) << record;
  return *builder->Finish();
}

FilterValues Values(std::vector<std::string> tokens) { return *ParseFilterValues(tokens); }

std::shared_ptr<RecordFilter> Keep(const std::string& field, std::vector<std::string> tokens,
                                   const std::string& drop_field = "",
                                   std::vector<std::string> drop = {}) {
  FilterConfig config;
  config.keep_field = field;
  if (!field.empty()) {
    config.keep_values = std::make_shared<StaticKeepValues>(Values(std::move(tokens)));
  }
  config.drop_field = drop_field;
  if (!drop.empty()) config.drop_values = Values(std::move(drop));
  return *RecordFilter::Make(std::move(config));
}

// The values of column `name` of the kept rows, as text.
std::vector<std::string> Column(const arrow::RecordBatch& batch, const std::string& name) {
  std::vector<std::string> out;
  const auto column = batch.GetColumnByName(name);
  for (int64_t i = 0; i < batch.num_rows(); ++i) {
    out.push_back(column->IsNull(i) ? "null" : column->GetScalar(i).ValueOrDie()->ToString());
  }
  return out;
}

using Counts = std::map<std::string, int64_t>;

TEST(FilterValues, DetectsIntegersAsPythonsIntReadsThemElseText) {
  auto ints = ParseFilterValues({"2", "4", "+1956", "69", "007", "1_000", "-3", "4"});
  ASSERT_TRUE(ints.ok());
  EXPECT_EQ(ints->kind, FilterValueKind::kInteger);
  EXPECT_EQ(ints->integers, (std::vector<int64_t>{-3, 2, 4, 7, 69, 1000, 1956}));
  for (const auto& tokens : std::vector<std::vector<std::string>>{
           {"2", "four"}, {"1__0"}, {"_1"}, {"1_"}, {"0x10"}, {"1.0"}, {"1e3"}, {"+"}}) {
    auto texts = ParseFilterValues(tokens);
    ASSERT_TRUE(texts.ok());
    EXPECT_EQ(texts->kind, FilterValueKind::kText) << tokens.front();
    EXPECT_EQ(texts->texts.size(), tokens.size());
  }
  EXPECT_FALSE(ParseFilterValues({}).ok());
  auto huge = ParseFilterValues({"1", "9223372036854775808"});
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("9223372036854775808"), std::string::npos);
  EXPECT_EQ(ParseFilterValues({"-9223372036854775808"})->integers.front(), INT64_MIN);
}

TEST(FilterValues, ReadsTheEndpointsArrayWithPythonsTypeRule) {
  auto ints = ParseFilterValuesJson("[3, 1, 2, 1]");
  ASSERT_TRUE(ints.ok());
  EXPECT_EQ(ints->kind, FilterValueKind::kInteger);
  EXPECT_EQ(ints->integers, (std::vector<int64_t>{1, 2, 3}));
  auto mixed = ParseFilterValuesJson(R"([1, "a", true, null, 2.5])");
  ASSERT_TRUE(mixed.ok());
  EXPECT_EQ(mixed->kind, FilterValueKind::kText);
  EXPECT_EQ(mixed->texts, (std::vector<std::string>{"1", "2.5", "None", "True", "a"}));
  EXPECT_EQ(ParseFilterValuesJson("[]")->size(), 0u);
  for (const char* bad :
       {"{}", "[1, [2]]", "[{\"a\":1}]", "not json", "[1,", "[18446744073709551615]"}) {
    EXPECT_FALSE(ParseFilterValuesJson(bad).ok()) << bad;
  }
}

TEST(RecordFilter, AllowlistKeepsListedValuesAndCountsEachSkipReason) {
  auto batch =
      Decode({R"({"team_id":2,"n":1})", R"({"team_id":3,"n":2})", R"({"n":3})",
              R"({"team_id":null,"n":4})", R"({"team_id":4,"n":5})", R"({"team_id":2,"n":6})"});
  FilterOutcome outcome;
  auto kept = Keep("team_id", {"2", "4", "1956"})->Apply(batch, &outcome);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(Column(**kept, "n"), (std::vector<std::string>{"1", "5", "6"}));
  EXPECT_EQ(outcome.skipped, (Counts{{"filter_excluded", 1}, {"filter_field_missing", 2}}));
  EXPECT_EQ(outcome.matched, (Counts{{"2", 2}, {"4", 1}}));
  EXPECT_EQ((*kept)->schema()->ToString(), batch->schema()->ToString());
}

TEST(RecordFilter, AllowlistFailsClosedOnAMissingFieldOrAnUnfilterableType) {
  FilterOutcome missing;
  auto none = Keep("team_id", {"1"})->Apply(Decode({R"({"a":1})", R"({"a":2})"}), &missing);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)->num_rows(), 0);
  EXPECT_EQ(missing.skipped, (Counts{{"filter_field_missing", 2}}));
  for (const char* record : {R"({"team_id":true})", R"({"team_id":1.5})"}) {
    FilterOutcome typed;
    const bool boolean = std::string(record).find("true") != std::string::npos;
    auto out = Keep("team_id", {"1"})
                   ->Apply(Decode({record, boolean ? R"({"team_id":false})" : R"({"team_id":1})"}),
                           &typed);
    ASSERT_TRUE(out.ok());
    EXPECT_EQ((*out)->num_rows(), 0) << record;  // bool, or double after promotion
    EXPECT_EQ(typed.skipped, (Counts{{"filter_field_missing", 2}})) << record;
  }
}

TEST(RecordFilter, ValuesMeetTheColumnTypeAsMillpondsCastDoes) {
  // Integers against text: their decimal text.
  FilterOutcome text;
  auto out = Keep("team_id", {"2", "7"})
                 ->Apply(Decode({R"({"team_id":"2"})", R"({"team_id":"x"})", R"({"team_id":"7"})"}),
                         &text);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Column(**out, "team_id"), (std::vector<std::string>{"2", "7"}));
  EXPECT_EQ(text.skipped, (Counts{{"filter_excluded", 1}}));
  // Text against integers: an unparseable value makes the set inapplicable (fails closed).
  FilterOutcome bad;
  out = Keep("team_id", {"2", "four"})->Apply(Decode({R"({"team_id":2})"}), &bad);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(bad.skipped, (Counts{{"filter_field_missing", 1}}));
}

TEST(RecordFilter, NamesMatchCaseInsensitivelyAcrossSpellings) {
  FilterOutcome outcome;
  auto out = Keep("team_id", {"1"})
                 ->Apply(Decode({R"({"Team_Id":1,"n":1})", R"({"team_id":1,"n":2})",
                                 R"({"TEAM_ID":2,"n":3})"}),
                         &outcome);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Column(**out, "n"), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(outcome.matched, (Counts{{"1", 2}}));
}

TEST(RecordFilter, DenylistDropsListedValuesAndFailsOpen) {
  auto batch = Decode({R"({"team_id":1,"n":1})", R"({"team_id":2,"n":2})",
                       R"({"team_id":null,"n":3})", R"({"n":4})"});
  FilterOutcome outcome;
  auto out = Keep("", {}, "team_id", {"2"})->Apply(batch, &outcome);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Column(**out, "n"), (std::vector<std::string>{"1", "3", "4"}));
  EXPECT_EQ(outcome.skipped, (Counts{{"filter_dropped", 1}}));
  // Missing field, unfilterable type, incompatible values: the batch as it is.
  for (const auto& [records, drop] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{R"({"a":1})"}, "2"}, {{R"({"team_id":2.5})"}, "2"}, {{R"({"team_id":2})"}, "x"}}) {
    FilterOutcome open;
    auto kept = Keep("", {}, "team_id", {drop})->Apply(Decode(records), &open);
    ASSERT_TRUE(kept.ok());
    EXPECT_EQ((*kept)->num_rows(), 1);
    EXPECT_TRUE(open.skipped.empty());
  }
}

TEST(RecordFilter, KeepThenDropComposeAsKeepAndNotDrop) {
  auto batch = Decode({R"({"team":1,"user":"a"})", R"({"team":1,"user":"b"})",
                       R"({"team":2,"user":"a"})", R"({"team":3,"user":"c"})"});
  FilterOutcome outcome;
  auto out = Keep("team", {"1", "2"}, "user", {"b"})->Apply(batch, &outcome);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Column(**out, "user"), (std::vector<std::string>{"a", "a"}));
  EXPECT_EQ(outcome.skipped, (Counts{{"filter_dropped", 1}, {"filter_excluded", 1}}));
  // Matched counts the allowlist's kept rows (before the denylist), as millpond does.
  EXPECT_EQ(outcome.matched, (Counts{{"1", 2}, {"2", 1}}));
}

std::shared_ptr<arrow::RecordBatch> UuidBatch(const std::vector<std::optional<std::string>>& ids) {
  arrow::FixedSizeBinaryBuilder builder(arrow::fixed_size_binary(16));
  arrow::Int64Builder n;
  int64_t i = 0;
  for (const auto& id : ids) {
    if (id) {
      EXPECT_TRUE(builder.Append(ParseUuidText(*id)->data()).ok());
    } else {
      EXPECT_TRUE(builder.AppendNull().ok());
    }
    EXPECT_TRUE(n.Append(++i).ok());
  }
  auto schema = arrow::schema(
      {arrow::field("id", arrow::fixed_size_binary(16)), arrow::field("n", arrow::int64())});
  return arrow::RecordBatch::Make(schema, static_cast<int64_t>(ids.size()),
                                  {*builder.Finish(), *n.Finish()});
}

TEST(RecordFilter, UuidColumnsCompareBytesAndLeaveOutValuesThatAreNotUuids) {
  const std::string a = "0190a6f4-1d2b-7c3e-8f40-123456789abc";
  const std::string b = "0190a6f4-1d2b-7c3e-8f40-123456789abd";
  auto batch = UuidBatch({a, b, std::nullopt, a});
  FilterOutcome outcome;
  // The same UUID in another accepted shape, plus a value that is not a UUID.
  auto out = Keep("id", {"{0190A6F4-1D2B-7C3E-8F40-123456789ABC}", "nope"})->Apply(batch, &outcome);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Column(**out, "n"), (std::vector<std::string>{"1", "4"}));
  EXPECT_EQ(outcome.skipped, (Counts{{"filter_excluded", 1}, {"filter_field_missing", 1}}));
  EXPECT_EQ(outcome.matched, (Counts{{a, 2}}));
  EXPECT_EQ(outcome.invalid_values, 1);
  // No usable value: the allowlist admits nothing (its own reason), the denylist denies nothing.
  FilterOutcome none;
  out = Keep("id", {"nope", "nada"})->Apply(batch, &none);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)->num_rows(), 0);
  EXPECT_EQ(none.skipped, (Counts{{"filter_value_invalid", 4}}));
  FilterOutcome deny;
  out = Keep("", {}, "id", {"nope"})->Apply(batch, &deny);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)->num_rows(), 4);
  EXPECT_EQ(deny.invalid_values, 1);
  FilterOutcome drop_b;
  out = Keep("", {}, "id", {b})->Apply(batch, &drop_b);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Column(**out, "n"), (std::vector<std::string>{"1", "3", "4"}));
  EXPECT_EQ(drop_b.skipped, (Counts{{"filter_dropped", 1}}));
}

TEST(RecordFilter, ReadsTheKeepSetOfItsSourceOnEveryBatch) {
  class Switching : public KeepValuesSource {
   public:
    std::shared_ptr<const FilterValues> Current() const override { return current; }
    std::shared_ptr<const FilterValues> current;
  };
  auto source = std::make_shared<Switching>();
  source->current = std::make_shared<const FilterValues>(Values({"1"}));
  FilterConfig config;
  config.keep_field = "t";
  config.keep_values = source;
  auto filter = *RecordFilter::Make(config);
  auto batch = Decode({R"({"t":1})", R"({"t":2})"});
  FilterOutcome first, second;
  EXPECT_EQ(Column(**filter->Apply(batch, &first), "t"), (std::vector<std::string>{"1"}));
  source->current = std::make_shared<const FilterValues>(Values({"2"}));
  EXPECT_EQ(Column(**filter->Apply(batch, &second), "t"), (std::vector<std::string>{"2"}));
}

}  // namespace
}  // namespace weir::records
