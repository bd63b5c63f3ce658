// Kafka metadata columns (parsing, collisions, values, the payload field that loses to a
// metadata column) and routing's pure part (the template, the name of each row's table and
// the fallback reasons).
#include <arrow/api.h>
#include <gtest/gtest.h>

#include "assert_status.h"
#include "records/metadata_columns.h"
#include "records/route.h"

namespace weir::records {
namespace {

// Each value's text ("null" for a null).
std::vector<std::string> Texts(const arrow::Array& array) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < array.length(); ++i) {
    out.push_back(array.IsNull(i) ? "null" : array.GetScalar(i).ValueOrDie()->ToString());
  }
  return out;
}

std::shared_ptr<arrow::Array> Strings(const std::vector<std::optional<std::string>>& values) {
  arrow::StringBuilder builder;
  for (const auto& value : values) {
    EXPECT_TRUE((value ? builder.Append(*value) : builder.AppendNull()).ok());
  }
  return builder.Finish().ValueOrDie();
}

TEST(MetadataColumnsTest, ParsesEverySourceAndRefusesBadItemsNamingThem) {
  ASSERT_OK_AND_ASSIGN(const auto columns,
                       ParseMetadataColumns({"t:topic", "p:partition", " o : offset",
                                             "ts:timestamp", "k:key", "trace:header.trace-id"}));
  ASSERT_EQ(columns.size(), 6u);
  EXPECT_EQ(columns[2].column, "o");
  EXPECT_EQ(columns[2].source, MetadataSource::kOffset);
  EXPECT_EQ(columns[5].source, MetadataSource::kHeader);
  EXPECT_EQ(columns[5].header, "trace-id");
  for (const char* bad : {"topic", "t:topics", "t:header.", "1t:topic", "_inserted_at:offset",
                          "row_id:offset", "a-b:topic"}) {
    const auto parsed = ParseMetadataColumns({bad});
    EXPECT_FALSE(parsed.ok()) << bad;
    if (!parsed.ok()) {
      EXPECT_NE(parsed.status().message().find(bad), std::string::npos) << bad;
    }
  }
  EXPECT_FALSE(ParseMetadataColumns({"K:key", "k:offset"}).ok()) << "case-insensitive duplicate";
}

TEST(MetadataColumnsTest, ANameOfATypedOrMappingColumnIsRefused) {
  ASSERT_OK_AND_ASSIGN(const auto columns, ParseMetadataColumns({"Kafka_Key:key"}));
  const Status refused = CheckMetadataCollisions(columns, {"id", "kafka_key"}, "a typed column");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("a typed column \"kafka_key\""), std::string::npos);
  EXPECT_TRUE(CheckMetadataCollisions(columns, {"id"}, "a typed column").ok());
}

TEST(MetadataColumnsTest, ValuesLandTypedAndAPayloadFieldOfTheSameNameIsDropped) {
  ASSERT_OK_AND_ASSIGN(
      auto columns, ParseMetadataColumns({"kt:topic", "kp:partition", "ko:offset", "kts:timestamp",
                                          "kk:key", "h1:header.a", "h2:header.b", "h1b:header.a"}));
  ASSERT_OK_AND_ASSIGN(
      auto builder, MetadataColumnsBuilder::Make(std::move(columns), arrow::default_memory_pool()));
  EXPECT_EQ(builder->header_names(), (std::vector<std::string>{"a", "b"}));
  RecordMetadata first{"events", 3, 41, 1700000000123, std::string_view("k1"), {"x", std::nullopt}};
  RecordMetadata second{
      "events", 4, 7, -1, std::nullopt, {std::string_view("\xff\xfe"), std::string_view("")}};
  ASSERT_OK(builder->Append(first));
  ASSERT_OK(builder->Append(second));
  EXPECT_EQ(builder->invalid_utf8(), 2)
      << "one nulled value in each of the two columns of header a";
  // The payload's own "KO" (any case) loses to the metadata column.
  arrow::Int64Builder id, ko;
  ASSERT_OK(id.AppendValues({1, 2}));
  ASSERT_OK(ko.Append(99));
  ASSERT_OK(ko.AppendNull());
  auto batch = arrow::RecordBatch::Make(
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("KO", arrow::int64())}), 2,
      {id.Finish().ValueOrDie(), ko.Finish().ValueOrDie()});
  int64_t dropped = 0;
  ASSERT_OK_AND_ASSIGN(auto out, builder->AttachTo(batch, &dropped));
  EXPECT_EQ(dropped, 1);
  EXPECT_EQ(builder->num_rows(), 0);
  ASSERT_EQ(out->num_columns(), 9);
  EXPECT_EQ(out->schema()->field(0)->name(), "id");
  EXPECT_EQ(out->schema()->field(3)->name(), "ko");
  using V = std::vector<std::string>;
  EXPECT_EQ(Texts(*out->column(3)), (V{"41", "7"}));
  EXPECT_TRUE(
      out->schema()->field(4)->type()->Equals(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")));
  const auto& timestamps = static_cast<const arrow::TimestampArray&>(*out->column(4));
  EXPECT_EQ(timestamps.Value(0), 1700000000123000);
  EXPECT_TRUE(timestamps.IsNull(1)) << "a record without a timestamp";
  EXPECT_EQ(Texts(*out->column(1)), (V{"events", "events"}));
  EXPECT_EQ(Texts(*out->column(2)), (V{"3", "4"}));
  EXPECT_EQ(Texts(*out->column(5)), (V{"k1", "null"}));
  EXPECT_EQ(Texts(*out->column(6)), (V{"x", "null"})) << "the non-UTF-8 header is nulled";
  EXPECT_EQ(Texts(*out->column(7)), (V{"null", ""}));
  EXPECT_EQ(Texts(*out->column(8)), Texts(*out->column(6))) << "one header, two columns";
}

TEST(RouteTest, TheTemplateHasExactlyOnePlaceholderAroundNameCharacters) {
  ASSERT_OK_AND_ASSIGN(const auto route, ParseRouteTemplate("events_{event}_v1"));
  EXPECT_EQ(route.prefix, "events_");
  EXPECT_EQ(route.field, "event");
  EXPECT_EQ(route.suffix, "_v1");
  for (const char* bad : {"events", "events_{}", "e_{a}{b}", "e-{a}", "e_{a.b}", "e_}a{"}) {
    EXPECT_FALSE(ParseRouteTemplate(bad).ok()) << bad;
  }
}

// 8 rows: 7 in the second, null elsewhere.
std::shared_ptr<arrow::Array> Ints() {
  arrow::Int64Builder builder;
  EXPECT_TRUE(builder.AppendNull().ok());
  EXPECT_TRUE(builder.Append(7).ok());
  EXPECT_TRUE(builder.AppendNulls(6).ok());
  return builder.Finish().ValueOrDie();
}

RouteRule Rule() {
  RouteRule rule;
  rule.route = RouteTemplate{"events_", "event", ""};
  rule.fallback = "events";
  rule.reserved = {"events_rejects"};
  return rule;
}

TEST(RouteTest, EachRowGoesToItsTableOrToTheFallbackForAReason) {
  auto batch = arrow::RecordBatch::Make(
      arrow::schema({arrow::field("Event", arrow::utf8()), arrow::field("event", arrow::int64())}),
      8,
      {Strings(
           {"Click", std::nullopt, "view", "bad name", "rejects", std::nullopt, "", std::nullopt}),
       Ints()});
  RouteRule rule = Rule();
  const RouteSplit split = SplitByRoute(*batch, rule);
  EXPECT_EQ(split.tables, (std::map<std::string, std::vector<int64_t>>{
                              {"events_click", {0}}, {"events_7", {1}}, {"events_view", {2}}}));
  EXPECT_EQ(split.fallback, (std::vector<int64_t>{3, 4, 5, 6, 7}));
  EXPECT_EQ(split.fallback_reasons,
            (std::map<std::string, int64_t>{
                {"field_missing", 2}, {"not_a_name", 2}, {"reserved_name", 1}}))
      << "an empty value names no table";
  rule.allow = {"events_click"};
  const RouteSplit allowed = SplitByRoute(*batch, rule);
  EXPECT_EQ(allowed.tables.size(), 1u);
  EXPECT_EQ(allowed.fallback_reasons.at("not_allowed"), 2);
}

std::shared_ptr<arrow::Array> Doubles() {
  arrow::DoubleBuilder builder;
  EXPECT_TRUE(builder.AppendValues({5.0, 5.5, 1e300}).ok());
  return builder.Finish().ValueOrDie();
}

TEST(RouteTest, IntegralDoublesNameTheTableTheirIntegerWouldAndFractionsNone) {
  RouteRule rule = Rule();
  auto batch = arrow::RecordBatch::Make(arrow::schema({arrow::field("event", arrow::float64())}), 3,
                                        {Doubles()});
  const RouteSplit split = SplitByRoute(*batch, rule);
  EXPECT_EQ(split.tables, (std::map<std::string, std::vector<int64_t>>{{"events_5", {0}}}));
  EXPECT_EQ(split.fallback_reasons.at("not_a_name"), 2);
  EXPECT_EQ(NameFor("events", Rule()).table, "events_events");
  RouteRule self = Rule();
  self.route.prefix = "";
  const RouteName name = NameFor("EVENTS", self);
  EXPECT_TRUE(name.table.empty());
  EXPECT_TRUE(name.reason.empty()) << "the fallback itself is no fallback reason";
}

}  // namespace
}  // namespace weir::records
