// Property test of the decode → table path (issue 9): thousands of random records whose keys
// come from a generator of awkward names, fed as the first batches of fresh tables and as later
// batches, through JsonBatchBuilder and DatasetWriter into a real DuckLake (SQLite file and the
// harness PostgreSQL). No flush may fail, every record must be a row or a reject, and DuckDB's
// own ducklake extension must read every table back.
#include <random>
#include <set>
#include <string>
#include <vector>

#include <arrow/api.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "assert_status.h"
#include "decode/field_names.h"
#include "decode/json_batch_builder.h"
#include "harness_env.h"
#include "ingest/dataset_writer.h"
#include "lake/duckdb_engine.h"
#include "lake/ducklake/ducklake_catalog.h"
#include "postgres_database.h"

namespace weir::ingest {
namespace {

using lake::ducklake::CatalogConfig;
using lake::ducklake::DuckLakeCatalog;
using lake::ducklake::SqlDialect;

constexpr int kTables = 6;
constexpr int kBatchesPerTable = 4;
constexpr int kRecordsPerBatch = 120;
constexpr const char* kIdKey = "weir_test_id";  // first key of every record, unique

// Keys a demanding user's topics really carry, and worse.
std::vector<std::string> AwkwardNames() {
  std::vector<std::string> names = {
      // case variants of one another and of the id key
      "seq", "Seq", "SEQ", "sEq", "name", "NAME", "Name", "userId", "userid", "USERID",
      "WEIR_TEST_ID", "Weir_Test_Id",
      // SQL's reserved words
      "select", "SELECT", "from", "case", "Case", "order", "group", "table", "where", "default",
      "null", "true", "user", "offset", "limit", "column", "primary", "check", "desc",
      // DuckDB's and DuckLake's own names
      "rowid", "ROWID", "row_id", "ROW_ID", "Row_Id", "row_id_", "begin_snapshot", "END_SNAPSHOT",
      "end_snapshot_", "snapshot_id", "filename", "file_row_number", "file_index",
      "_ducklake_internal_snapshot_id", "_ducklake_internal_row_id", "_DuckLake_Internal_x",
      "_ducklake_internal",
      // weir's own and its rejects table's columns
      "_inserted_at", "_INSERTED_AT", "_Inserted_At", "_inserted_at_", "topic", "partition",
      "payload", "reason", "error", "received_at", "key",
      // quotes, dots, spaces, leading digits, punctuation
      "a\"b", "\"", "it's", "`x`", "a.b", ".", "a b", " lead", "trail ", " ", "1a", "9", "0_x",
      "a-b", "a;drop table t", "$x", "a\\b", "tab\there", "new\nline",
      // non-ASCII and combining characters
      "caf\xC3\xA9", "\xE5\x90\x8D\xE5\x89\x8D", "e\xCC\x81", "\xF0\x9F\x98\x80", "\xC3\x85ngstr",
      // empty and long
      "", std::string(63, 'a'), std::string(64, 'b'), std::string(65, 'c'), std::string(200, 'd'),
      std::string(62, 'r') + "_", "Row_ID" + std::string(57, 'x')};
  return names;
}

// A random value of any JSON kind, so a name's type differs between records and tables.
std::string RandomValue(std::mt19937_64& rng) {
  switch (rng() % 8) {
    case 0:
      return std::to_string(static_cast<int64_t>(rng()) >> (rng() % 60));
    case 1:
      return fmt::format("{}", static_cast<double>(rng() % 100000) / 7.0);
    case 2:
      return rng() % 2 ? "true" : "false";
    case 3:
      return "null";
    case 4:
      return R"({"nested": [1, "two", null]})";
    case 5:
      return "[1, 2.5, \"x\"]";
    case 6:
      return "18446744073709551615";
    default:
      return fmt::format("\"text {} \\\"quoted\\\" \\u00e9\"", rng() % 1000);
  }
}

// `text` as a JSON string literal.
std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (const unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += fmt::format("\\u{:04x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// A random identifier-like name in random case, so new columns keep appearing.
std::string RandomIdentifier(std::mt19937_64& rng) {
  static constexpr std::string_view kChars = "abcdefgABCDEFG_0123";
  std::string name(1, "aAbB_"[rng() % 5]);
  const size_t length = rng() % 6;
  for (size_t i = 0; i < length; ++i) name += kChars[rng() % kChars.size()];
  return name;
}

class FieldNamePropertyTest : public ::testing::TestWithParam<SqlDialect> {
 protected:
  void SetUp() override {
    dir_ = testing::TestOutputDir(std::string("field_name_property_") +
                                  (GetParam() == SqlDialect::kSqlite ? "sqlite" : "postgres"));
    config_.kind = GetParam();
    config_.data_path = (dir_ / "data").string();
    config_.extension_directory = lake::DefaultExtensionDirectory();
    if (GetParam() == SqlDialect::kSqlite) {
      config_.sqlite_path = (dir_ / "catalog.sqlite").string();
    } else {
      WEIR_HARNESS_SETTING(dsn, "WEIR_TEST_PG_DSN");
      config_.postgres_conninfo =
          testing::FreshPostgresDatabase(dsn, "field_names_" + std::to_string(::getpid()));
    }
  }

  std::unique_ptr<lake::DuckDbEngine> Reader() {
    auto engine = lake::DuckDbEngine::Open(
        {lake::DefaultExtensionDirectory(),
         {"ducklake", GetParam() == SqlDialect::kSqlite ? "sqlite_scanner" : "postgres_scanner"}});
    EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    const std::string target = GetParam() == SqlDialect::kSqlite
                                   ? "ducklake:sqlite:" + config_.sqlite_path
                                   : "ducklake:postgres:" + config_.postgres_conninfo;
    const Status attached =
        (*engine)->Run("ATTACH " + lake::SqlQuote(target) + " AS lake (READ_ONLY)");
    EXPECT_TRUE(attached.ok()) << attached.ToString();
    return std::move(*engine);
  }

  std::filesystem::path dir_;
  CatalogConfig config_;
};

TEST_P(FieldNamePropertyTest, NoKeyEverFailsAFlushAndEveryRecordIsARowOrAReject) {
  const char* seed_text = std::getenv("WEIR_PROPERTY_SEED");
  const uint64_t seed = seed_text != nullptr ? std::stoull(seed_text) : std::random_device{}();
  SCOPED_TRACE(fmt::format("WEIR_PROPERTY_SEED={}", seed));
  std::mt19937_64 rng(seed);
  const std::vector<std::string> awkward = AwkwardNames();

  ASSERT_OK_AND_ASSIGN(auto catalog, DuckLakeCatalog::Open(config_));
  std::map<std::string, std::set<int64_t>> ids_of;  // per table, the ids of accepted records
  std::map<std::string, int64_t> rejects_of;
  int64_t consumed = 0;
  int64_t id = 0;
  for (int t = 0; t < kTables; ++t) {
    DatasetConfig dataset;
    dataset.name = dataset.table = fmt::format("prop_{}", t);
    dataset.topic = "prop";
    if (t % 3 == 2) dataset.partitioning = {{"_inserted_at", {lake::TransformKind::kDay}}};
    DatasetWriter writer(dataset, catalog.get());
    ASSERT_OK_AND_ASSIGN(auto builder,
                         decode::JsonBatchBuilder::Make({}, arrow::default_memory_pool()));
    int64_t offset = 0;
    for (int b = 0; b < kBatchesPerTable; ++b) {
      SealedFlush flush;
      const int64_t first_offset = offset;
      for (int r = 0; r < kRecordsPerBatch; ++r, ++offset) {
        ++consumed;
        std::string json = fmt::format(R"({{"{}": {})", kIdKey, ++id);
        const size_t keys = rng() % 12;
        for (size_t k = 0; k < keys; ++k) {
          const std::string name =
              rng() % 4 == 0 ? RandomIdentifier(rng) : awkward[rng() % awkward.size()];
          json += ", " + JsonString(name) + ": " + RandomValue(rng);
        }
        json += "}";
        if (rng() % 40 == 0) json.pop_back();  // now invalid JSON: a reject
        const Status appended = builder->Append(json);
        if (appended.ok()) {
          ids_of[dataset.table].insert(id);
          continue;
        }
        ASSERT_EQ(ClassOf(appended), ErrorClass::kBadData) << appended.ToString();
        RejectRecord reject;
        reject.topic = "prop";
        reject.offset = offset;
        reject.payload = json;
        reject.payload_bytes = static_cast<int64_t>(json.size());
        reject.reason = GetErrorDetail(appended)->code();
        reject.error = appended.message();
        flush.rejects.push_back(std::move(reject));
        ++rejects_of[dataset.table];
      }
      ASSERT_OK_AND_ASSIGN(flush.batch, builder->Finish());
      flush.offsets = {{"prop", 0, first_offset, offset}};
      flush.records = kRecordsPerBatch;
      ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(flush));
      ASSERT_FALSE(outcome.fenced) << dataset.table << " batch " << b;
      EXPECT_EQ(outcome.rows, flush.batch->num_rows());
      EXPECT_EQ(outcome.rejects, static_cast<int64_t>(flush.rejects.size()));
      EXPECT_EQ(outcome.fields_dropped.count("refused_by_catalog"), 0u)
          << "the name policy let through a name the catalog refuses";
    }
  }

  auto reader = Reader();
  int64_t rows_total = 0;
  int64_t rejects_total = 0;
  for (const auto& [table, ids] : ids_of) {
    SCOPED_TRACE(table);
    ASSERT_OK_AND_ASSIGN(
        auto rows, reader->Query(fmt::format("SELECT {} FROM lake.{} ORDER BY 1", kIdKey, table)));
    std::set<int64_t> landed;
    for (const auto& row : rows) landed.insert(std::stoll(row[0].value()));
    EXPECT_EQ(rows.size(), landed.size()) << "an id landed twice";
    EXPECT_EQ(landed, ids);
    rows_total += static_cast<int64_t>(rows.size());
    // Every column of every row reads back, and no two columns resolve to one name.
    ASSERT_OK_AND_ASSIGN(auto all, reader->Query(fmt::format("SELECT * FROM lake.{}", table)));
    EXPECT_EQ(all.size(), rows.size());
    ASSERT_OK_AND_ASSIGN(
        auto columns,
        reader->Query(fmt::format("SELECT column_name FROM information_schema.columns WHERE "
                                  "table_catalog = 'lake' AND table_name = '{}'",
                                  table)));
    std::set<std::string> folded;
    for (const auto& column : columns) {
      const std::string name = column[0].value();
      EXPECT_TRUE(folded.insert(decode::FoldName(name)).second) << name;
      if (name != "_inserted_at") {
        EXPECT_EQ(decode::CheckFieldName(name, 64).problem, std::nullopt) << name;
      }
    }
    if (rejects_of[table] > 0) {
      ASSERT_OK_AND_ASSIGN(
          auto rejects, reader->Query(fmt::format("SELECT count(*) FROM lake.{}_rejects", table)));
      EXPECT_EQ(std::stoll(rejects[0][0].value()), rejects_of[table]);
      rejects_total += rejects_of[table];
    }
  }
  EXPECT_EQ(rows_total + rejects_total, consumed);
  EXPECT_GT(rejects_total, 0) << "the generator made no reject: the property is not exercised";
}

// A batch of `rows` rows: id (from `first_id`), row_id (a name DuckLake refuses, as if the
// decoder's policy had let it through) and x.
std::shared_ptr<arrow::RecordBatch> RefusedNameBatch(int64_t first_id, int64_t rows) {
  arrow::Int64Builder ids, row_ids;
  arrow::StringBuilder xs;
  for (int64_t i = 0; i < rows; ++i) {
    EXPECT_TRUE(ids.Append(first_id + i).ok());
    EXPECT_TRUE((i % 2 ? row_ids.AppendNull() : row_ids.Append(i)).ok());
    EXPECT_TRUE(xs.Append("x" + std::to_string(first_id + i)).ok());
  }
  auto schema =
      arrow::schema({arrow::field(kIdKey, arrow::int64()), arrow::field("row_id", arrow::int64()),
                     arrow::field("x", arrow::utf8())});
  return arrow::RecordBatch::Make(
      schema, rows,
      {ids.Finish().ValueOrDie(), row_ids.Finish().ValueOrDie(), xs.Finish().ValueOrDie()});
}

TEST_P(FieldNamePropertyTest, AColumnTheCatalogRefusesIsDroppedAndCountedAndTheRestLands) {
  ASSERT_OK_AND_ASSIGN(auto catalog, DuckLakeCatalog::Open(config_));
  DatasetConfig dataset;
  dataset.name = dataset.table = "refused";
  dataset.topic = "refused";
  int64_t offset = 0;
  auto write = [&](DatasetWriter& writer, int64_t rows) -> Result<FlushOutcome> {
    SealedFlush flush;
    flush.batch = RefusedNameBatch(offset, rows);
    flush.offsets = {{"refused", 0, offset, offset + rows}};
    flush.records = rows;
    offset += rows;
    return writer.Write(flush);
  };
  {
    // The first flush creates the table: CREATE TABLE is refused, so the table is created
    // without the data's columns and they are added one by one.
    DatasetWriter writer(dataset, catalog.get());
    ASSERT_OK_AND_ASSIGN(const FlushOutcome first, write(writer, 10));
    EXPECT_EQ(first.rows, 10);
    EXPECT_EQ(first.fields_dropped, (std::map<std::string, int64_t>{{"refused_by_catalog", 5}}));
    // The refusal is remembered: the next flush does not ask again, and counts again.
    ASSERT_OK_AND_ASSIGN(const FlushOutcome second, write(writer, 4));
    EXPECT_EQ(second.fields_dropped, (std::map<std::string, int64_t>{{"refused_by_catalog", 2}}));
  }
  {
    // A new process against the existing table: ADD COLUMN is refused, the flush lands.
    DatasetWriter writer(dataset, catalog.get());
    ASSERT_OK_AND_ASSIGN(const FlushOutcome third, write(writer, 6));
    EXPECT_EQ(third.rows, 6);
    EXPECT_EQ(third.fields_dropped, (std::map<std::string, int64_t>{{"refused_by_catalog", 3}}));
  }
  auto reader = Reader();
  ASSERT_OK_AND_ASSIGN(auto rows, reader->Query(fmt::format(
                                      "SELECT count(*), count(DISTINCT {0}), min({0}), max({0}), "
                                      "count(x), count(_inserted_at) FROM lake.refused",
                                      kIdKey)));
  EXPECT_EQ(
      rows,
      (std::vector<std::vector<std::optional<std::string>>>{{"20", "20", "0", "19", "20", "20"}}));
  ASSERT_OK_AND_ASSIGN(auto columns,
                       reader->Query("SELECT column_name FROM information_schema.columns WHERE "
                                     "table_catalog = 'lake' AND table_name = 'refused' "
                                     "ORDER BY ordinal_position"));
  EXPECT_EQ(columns, (std::vector<std::vector<std::optional<std::string>>>{
                         {"_inserted_at"}, {kIdKey}, {"x"}}));
}

INSTANTIATE_TEST_SUITE_P(Catalogs, FieldNamePropertyTest,
                         ::testing::Values(SqlDialect::kSqlite, SqlDialect::kPostgres),
                         [](const auto& param_info) {
                           return param_info.param == SqlDialect::kSqlite ? "Sqlite" : "Postgres";
                         });

}  // namespace
}  // namespace weir::ingest
