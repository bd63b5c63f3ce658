#include "records/variant_encoding.h"

#include <arrow/api.h>
#include <arrow/extension_type.h>
#include <gtest/gtest.h>

#include "decode/json_batch_builder.h"
#include "records/variant_columns.h"
#include "records/variant_shredding.h"

namespace weir::records {
namespace {

std::string Hex(std::string_view bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (const unsigned char c : bytes) {
    if (!out.empty()) out.push_back(' ');
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

VariantBytes Encode(std::string_view json) {
  VariantEncoder encoder;
  VariantBytes bytes;
  const Status status = encoder.Encode(json, &bytes);
  EXPECT_TRUE(status.ok()) << json << ": " << status.ToString();
  return bytes;
}

std::string Value(std::string_view json) { return Hex(Encode(json).value); }

TEST(VariantEncoding, PrimitivesTakeTheSpecsHeadersAndTheNarrowestInteger) {
  EXPECT_EQ(Value("null"), "00");
  EXPECT_EQ(Value("true"), "04");
  EXPECT_EQ(Value("false"), "08");
  EXPECT_EQ(Value("1"), "0c 01");
  EXPECT_EQ(Value("-5"), "0c fb");
  EXPECT_EQ(Value("300"), "10 2c 01");
  EXPECT_EQ(Value("70000"), "14 70 11 01 00");
  EXPECT_EQ(Value("5000000000"), "18 00 f2 05 2a 01 00 00 00");
  EXPECT_EQ(Value("-9223372036854775808"), "18 00 00 00 00 00 00 00 80");
  EXPECT_EQ(Value("1.5"), "1c 00 00 00 00 00 00 f8 3f");
  EXPECT_EQ(Value("1e3"), "1c 00 00 00 00 00 40 8f 40");
  // The metadata of a value without objects: version 1, sorted, no strings.
  EXPECT_EQ(Hex(Encode("1").metadata), "11 00 00");
}

TEST(VariantEncoding, IntegersBeyondInt64AreAnExactDecimalThenADouble) {
  // (INT64_MAX, UINT64_MAX]: decimal16, scale 0, the unscaled value little-endian.
  EXPECT_EQ(Value("9223372036854775808"), "28 00 00 00 00 00 00 00 00 80 00 00 00 00 00 00 00 00");
  EXPECT_EQ(Value("18446744073709551615"), "28 00 ff ff ff ff ff ff ff ff 00 00 00 00 00 00 00 00");
  // Beyond UINT64_MAX (and below INT64_MIN) a double, as DuckDB's json::VARIANT has it.
  EXPECT_EQ(Value("18446744073709551616"), "1c 00 00 00 00 00 00 f0 43");
  EXPECT_EQ(Value("1e400"), "1c 00 00 00 00 00 00 f0 7f");  // +inf
}

TEST(VariantEncoding, StringsAreShortBelow64BytesAndLongFromThere) {
  EXPECT_EQ(Value(R"("h\u00e9")"), "0d 68 c3 a9");
  EXPECT_EQ(Value(R"("")"), "01");
  const std::string long_text(64, 'x');
  const std::string encoded = Encode("\"" + long_text + "\"").value;
  EXPECT_EQ(Hex(encoded.substr(0, 5)), "40 40 00 00 00");
  EXPECT_EQ(encoded.substr(5), long_text);
}

TEST(VariantEncoding, ObjectsListFieldIdsInKeyOrderAgainstASortedDictionary) {
  // The spec's example: {"c": 3, "b": 2, "a": 1}.
  const VariantBytes bytes = Encode(R"({"c":3,"b":2,"a":1})");
  EXPECT_EQ(Hex(bytes.metadata), "11 03 00 01 02 03 61 62 63");
  EXPECT_EQ(Hex(bytes.value), "02 03 00 01 02 00 02 04 06 0c 01 0c 02 0c 03");
  EXPECT_EQ(Value("{}"), "02 00 00");
  // A repeated key keeps its last value.
  EXPECT_EQ(Value(R"({"a":1,"a":2})"), "02 01 00 00 02 0c 02");
  // Keys of every level share one dictionary.
  const VariantBytes nested = Encode(R"({"b":{"a":1}})");
  EXPECT_EQ(Hex(nested.metadata), "11 02 00 01 02 61 62");
  EXPECT_EQ(Hex(nested.value), "02 01 01 00 07 02 01 00 00 02 0c 01");
}

TEST(VariantEncoding, ArraysKeepTheirOrderAndGrowTheirHeaders) {
  EXPECT_EQ(Value(R"([1,"a",null])"), "03 03 00 02 04 05 0c 01 05 61 00");
  EXPECT_EQ(Value("[]"), "03 00 00");
  // 300 elements: is_large (4-byte count), 2-byte offsets.
  std::string json = "[";
  for (int i = 0; i < 300; ++i) json += (i ? ",1" : "1");
  json += "]";
  const std::string encoded = Encode(json).value;
  EXPECT_EQ(static_cast<unsigned char>(encoded[0]), (0b101 << 2) | 3);
  EXPECT_EQ(Hex(encoded.substr(1, 4)), "2c 01 00 00");
  EXPECT_EQ(encoded.size(), 1u + 4u + 301u * 2u + 300u * 2u);
}

TEST(VariantEncoding, ObjectsWithManyKeysWidenIdsAndCount) {
  std::string json = "{";
  for (int i = 0; i < 300; ++i) json += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":null";
  json += "}";
  const VariantBytes bytes = Encode(json);
  // is_large, 2-byte field ids, 2-byte offsets (300 one-byte values).
  EXPECT_EQ(static_cast<unsigned char>(bytes.value[0]), ((1 << 4 | 1 << 2 | 1) << 2) | 2);
  // Dictionary of 300 keys: 2-byte sizes and offsets.
  EXPECT_EQ(Hex(bytes.metadata.substr(0, 3)), "51 2c 01");
}

TEST(VariantEncoding, RefusesWhatIsNotOneJsonValue) {
  VariantEncoder encoder;
  VariantBytes bytes;
  for (const char* bad : {"", "{", R"({"a":})", "1 2", "[1,]", "nul", "{\"a\":1}x", "\"\xff\""}) {
    EXPECT_FALSE(encoder.Encode(bad, &bytes).ok()) << bad;
  }
  // The encoder is usable after a refusal.
  ASSERT_TRUE(encoder.Encode("[true]", &bytes).ok());
  EXPECT_EQ(Hex(bytes.value), "03 01 00 01 04");
}

std::shared_ptr<arrow::RecordBatch> Decode(const std::vector<std::string>& records) {
  auto builder = *decode::JsonBatchBuilder::Make({}, arrow::default_memory_pool());
  for (const auto& record : records) EXPECT_TRUE(builder->Append(record).ok()) << record;
  return *builder->Finish();
}

TEST(VariantColumns, RefusesNamesAsMillpondDoes) {
  EXPECT_TRUE(ParseVariantColumns({"properties", "person_properties"}).ok());
  EXPECT_FALSE(ParseVariantColumns({"properties_variant"}).ok());
  EXPECT_FALSE(ParseVariantColumns({"Props_VARIANT"}).ok());
  EXPECT_FALSE(ParseVariantColumns({"bad-name"}).ok());
  EXPECT_FALSE(ParseVariantColumns({"props", "PROPS"}).ok());
}

TEST(VariantColumns, AddsACompanionNullsOnlyItForBadJsonAndDropsCollidingFields) {
  // Unshredded here (max_keys 0): the extension column of metadata and value.
  auto columns = *VariantColumns::Make({"properties", "absent"}, {.min_share = 0.5, .max_keys = 0});
  auto batch =
      Decode({R"({"id":1,"properties":{"a":1},"properties_variant":"x"})",
              R"({"id":2,"properties":"{not json","PROPERTIES_VARIANT":5})", R"({"id":3})"});
  VariantOutcome outcome;
  auto out = columns.Apply(batch, &outcome);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto& schema = *(*out)->schema();
  ASSERT_EQ(schema.num_fields(), 3) << schema.ToString();
  EXPECT_EQ(schema.field(0)->name(), "id");
  EXPECT_EQ(schema.field(1)->name(), "properties");
  EXPECT_EQ(schema.field(2)->name(), "properties_variant");
  EXPECT_TRUE(IsVariantType(*schema.field(2)->type()));
  EXPECT_EQ(outcome.encoded, 1);
  EXPECT_EQ(outcome.malformed, 1);
  EXPECT_EQ(outcome.collisions_dropped, 2);
  const auto& companion = static_cast<const arrow::ExtensionArray&>(*(*out)->column(2));
  const auto& storage = static_cast<const arrow::StructArray&>(*companion.storage());
  EXPECT_FALSE(companion.IsNull(0));
  EXPECT_TRUE(companion.IsNull(1));
  EXPECT_TRUE(companion.IsNull(2));  // the source is null there
  const auto& value = static_cast<const arrow::BinaryArray&>(*storage.field(1));
  EXPECT_EQ(Hex(value.GetView(0)), "02 01 00 00 02 0c 01");
  // The source column is kept as it was.
  EXPECT_EQ((*out)->column(1)->GetScalar(1).ValueOrDie()->ToString(), "{not json");
}

std::vector<std::optional<VariantBytes>> Rows(const std::vector<std::string>& jsons) {
  std::vector<std::optional<VariantBytes>> rows;
  for (const auto& json : jsons) {
    if (json.empty()) {
      rows.emplace_back();
    } else {
      rows.emplace_back(Encode(json));
    }
  }
  return rows;
}

TEST(VariantShredding, CommonKeysOfTheFlushAreShreddedByTheirMostFrequentType) {
  const auto rows = Rows({R"({"a":1,"b":"x","rare":1})", R"({"a":9223372036854775808,"b":"y"})",
                          R"({"a":3,"b":null,"c":[1]})", R"([1,2])", ""});
  const auto keys = ChooseShreddedKeys(rows, {});
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0].name, "a");
  EXPECT_EQ(keys[0].type, ShredType::kInt64);
  EXPECT_EQ(keys[1].name, "b");
  EXPECT_EQ(keys[1].type, ShredType::kString);
  EXPECT_TRUE(ChooseShreddedKeys(rows, {.min_share = 0.5, .max_keys = 1}).size() == 1u);
}

TEST(VariantShredding, ValuesThatDoNotFitGoToTheKeysValueNeverItsTypedColumn) {
  const auto rows = Rows({R"({"a":1,"b":"x","rare":1})", R"({"a":9223372036854775808,"b":"y"})",
                          R"({"a":3,"b":null,"c":[1]})", R"([1,2])", ""});
  const auto keys = ChooseShreddedKeys(rows, {});
  auto built = BuildVariantColumn(rows, keys);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  const auto& column = static_cast<const arrow::StructArray&>(**built);
  ASSERT_TRUE(IsShreddedVariantType(*column.type())) << column.type()->ToString();
  EXPECT_TRUE(column.IsNull(4));
  const auto& value = static_cast<const arrow::BinaryArray&>(*column.field(1));
  const auto& typed = static_cast<const arrow::StructArray&>(*column.field(2));
  const auto& a = static_cast<const arrow::StructArray&>(*typed.field(0));
  const auto& a_value = static_cast<const arrow::BinaryArray&>(*a.field(0));
  const auto& a_typed = static_cast<const arrow::Int64Array&>(*a.field(1));
  EXPECT_EQ(a_typed.Value(0), 1);
  EXPECT_TRUE(a_value.IsNull(0));
  // 2^63 does not fit int64: the exact decimal goes to a.value, a.typed_value stays null.
  EXPECT_TRUE(a_typed.IsNull(1));
  EXPECT_EQ(Hex(a_value.GetView(1).substr(0, 2)), "28 00");
  EXPECT_EQ(a_typed.Value(2), 3);
  const auto& b = static_cast<const arrow::StructArray&>(*typed.field(1));
  const auto& b_value = static_cast<const arrow::BinaryArray&>(*b.field(0));
  EXPECT_EQ(Hex(b_value.GetView(2)), "00");  // a JSON null is a Variant null in value
  // Residual objects hold the keys that are not shredded; fully shredded rows have none.
  EXPECT_FALSE(value.IsNull(0));
  EXPECT_TRUE(value.IsNull(1));
  const auto residual = ObjectFields(rows[2]->metadata, value.GetView(2));
  ASSERT_TRUE(residual.has_value());
  ASSERT_EQ(residual->size(), 1u);
  EXPECT_EQ((*residual)[0].key, "c");
  // A non-object is not shredded: whole in value, typed_value null.
  EXPECT_TRUE(typed.IsNull(3));
  EXPECT_EQ(value.GetView(3), rows[3]->value);
}

}  // namespace
}  // namespace weir::records
