#include "ingest/record_stages.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include "observe/metric_names.h"

namespace weir::ingest {
namespace {

namespace m = observe;

std::shared_ptr<arrow::Array> Strings(const std::vector<std::optional<std::string>>& values) {
  arrow::StringBuilder builder;
  for (const auto& value : values) {
    if (value) {
      EXPECT_TRUE(builder.Append(*value).ok());
    } else {
      EXPECT_TRUE(builder.AppendNull().ok());
    }
  }
  return builder.Finish().ValueOrDie();
}

class RecordStagesTest : public ::testing::Test {
 protected:
  RecordStagesTest() {
    options_.config.name = "ds";
    options_.typed_columns =
        records::TypedColumns::Make(records::ParseTypedColumns({"score:double"}).ValueOrDie())
            .ValueOrDie();
    options_.variant_columns = records::VariantColumns::Make({"doc"}).ValueOrDie();
  }

  double Count(const m::MetricDef& metric, const std::string& reason) {
    return metrics_.Counter(metric, {{"dataset", "ds"}, {"reason", reason}}).value();
  }

  DatasetOptions options_;
  m::MetricsRegistry metrics_;
  LogRateLimiter limiter_{std::chrono::minutes(1)};
};

TEST_F(RecordStagesTest, ApplyCastsThenAddsCompanionsAndCountsWhatEachStageNulledOrDropped) {
  RecordStages stages(options_, metrics_, limiter_);
  auto schema =
      arrow::schema({arrow::field("score", arrow::utf8()), arrow::field("doc", arrow::utf8()),
                     arrow::field("doc_variant", arrow::utf8())});
  auto batch = arrow::RecordBatch::Make(
      schema, 3,
      {Strings({"1.5", "not a number", "3"}), Strings({"{\"a\":1}", "{broken", std::nullopt}),
       Strings({std::nullopt, "forged", std::nullopt})});
  records::FilterOutcome filtered;
  auto staged = stages.Apply(batch, &filtered);
  ASSERT_TRUE(staged.ok()) << staged.status().ToString();
  const auto& out = *staged;
  EXPECT_EQ(out->num_rows(), 3);
  ASSERT_NE(out->GetColumnByName("score"), nullptr);
  EXPECT_EQ(out->GetColumnByName("score")->type()->id(), arrow::Type::DOUBLE);
  EXPECT_EQ(out->GetColumnByName("score")->null_count(), 1);
  EXPECT_EQ(Count(m::kValuesNulled, "column_coercion"), 1);
  EXPECT_EQ(Count(m::kValuesNulled, "variant_invalid_json"), 1);
  EXPECT_EQ(Count(m::kFieldsDropped, "variant_companion"), 1);
  EXPECT_TRUE(filtered.skipped.empty());  // no filter configured
  // A second batch adds to the same series.
  ASSERT_TRUE(stages.Apply(batch, &filtered).ok());
  EXPECT_EQ(Count(m::kValuesNulled, "column_coercion"), 2);
  // No batch (a flush of rejects alone) passes through untouched.
  auto none = stages.Apply(nullptr, &filtered);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
}

TEST_F(RecordStagesTest, DecodeStatisticsAreCountedOnceEachAsTheyGrow) {
  RecordStages stages(options_, metrics_, limiter_);
  RecordStages::Published published;
  decode::DecodeStats stats;
  stats.dropped_fields["reserved_name"] = 2;
  stats.renamed_fields["reserved_name"] = 1;
  stats.lossy_integers = 3;
  stages.PublishDecodeStats(stats, &published);
  stages.PublishDecodeStats(stats, &published);  // nothing new
  EXPECT_EQ(Count(m::kFieldsDropped, "reserved_name"), 2);
  EXPECT_EQ(Count(m::kFieldsRenamed, "reserved_name"), 1);
  EXPECT_EQ(Count(m::kValuesNulled, "integer_beyond_int64"), 3);
  stats.dropped_fields["reserved_name"] = 5;
  stats.dropped_fields["invalid_name"] = 1;
  stats.lossy_integers = 4;
  stages.PublishDecodeStats(stats, &published);
  EXPECT_EQ(Count(m::kFieldsDropped, "reserved_name"), 5);
  EXPECT_EQ(Count(m::kFieldsDropped, "invalid_name"), 1);
  EXPECT_EQ(Count(m::kValuesNulled, "integer_beyond_int64"), 4);
}

TEST_F(RecordStagesTest, MetadataColumnsReplacePayloadFieldsOfTheirNameAndCountInvalidKeys) {
  RecordStages stages(options_, metrics_, limiter_);
  auto metadata =
      records::MetadataColumnsBuilder::Make(
          records::ParseMetadataColumns({"kafka_offset:offset", "kafka_key:key"}).ValueOrDie(),
          arrow::default_memory_pool())
          .ValueOrDie();
  for (int64_t offset : {10, 11}) {
    records::RecordMetadata meta;
    meta.topic = "t";
    meta.offset = offset;
    meta.key = offset == 10 ? std::string_view("k") : std::string_view("\xff\xfe");
    ASSERT_TRUE(metadata->Append(meta).ok());
  }
  auto schema = arrow::schema(
      {arrow::field("id", arrow::utf8()), arrow::field("KAFKA_OFFSET", arrow::utf8())});
  auto batch =
      arrow::RecordBatch::Make(schema, 2, {Strings({"a", "b"}), Strings({"forged", std::nullopt})});
  RecordStages::Published published;
  auto attached = stages.AttachMetadata(metadata.get(), batch, &published);
  ASSERT_TRUE(attached.ok()) << attached.status().ToString();
  EXPECT_EQ((*attached)->schema()->field_names(),
            (std::vector<std::string>{"id", "kafka_offset", "kafka_key"}));
  EXPECT_EQ(Count(m::kFieldsDropped, "metadata_column"), 1);
  EXPECT_EQ(Count(m::kValuesNulled, "invalid_utf8"), 1);
  EXPECT_EQ(published.metadata_nulled, 1);
  // No metadata columns configured: the batch as it is.
  auto same = stages.AttachMetadata(nullptr, batch, &published);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, batch);
}

}  // namespace
}  // namespace weir::ingest
