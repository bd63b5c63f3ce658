// The catalogs' own logic without servers: REST error mapping, URL encoding, HTTP failures
// that never reach a server, and the SQLite catalog (a file in a temporary directory): create,
// load, compare-and-swap, and writers racing one swap.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lake/iceberg/http_client.h"
#include "lake/iceberg/rest_catalog.h"
#include "lake/iceberg/sql_catalog.h"

namespace weir::lake::iceberg {
namespace {

#define ASSERT_OK(expr)                      \
  do {                                       \
    const ::weir::Status _st = (expr);       \
    ASSERT_TRUE(_st.ok()) << _st.ToString(); \
  } while (false)

HttpResponse Response(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

TEST(RestError, CarriesTheServersTypeAndMessageAndAKindFromTheStatus) {
  Status status = RestError(Response(404, R"({"error": {"message": "Table does not exist: ns.t",
                 "type": "NoSuchTableException", "code": 404}})"),
                            "load table ns.t");
  EXPECT_EQ(CatalogErrorKindOf(status), CatalogErrorKind::kNotFound);
  EXPECT_EQ(ClassOf(status), ErrorClass::kFatal);
  EXPECT_NE(status.message().find("NoSuchTableException: Table does not exist: ns.t"),
            std::string::npos)
      << status.ToString();
  const auto* detail = dynamic_cast<const CatalogErrorDetail*>(status.detail().get());
  ASSERT_NE(detail, nullptr);
  EXPECT_EQ(detail->http_status(), 404);
  EXPECT_EQ(detail->server_type(), "NoSuchTableException");
}

TEST(RestError, ClassifiesEachStatus) {
  EXPECT_EQ(CatalogErrorKindOf(RestError(Response(409, "{}"), "x")),
            CatalogErrorKind::kAlreadyExists);
  EXPECT_EQ(CatalogErrorKindOf(RestError(Response(401, "{}"), "x")), CatalogErrorKind::kRejected);
  EXPECT_EQ(CatalogErrorKindOf(RestError(Response(400, "not json"), "x")),
            CatalogErrorKind::kRejected);
  for (int code : {429, 500, 502, 503, 504}) {
    Status status = RestError(Response(code, ""), "x");
    EXPECT_EQ(CatalogErrorKindOf(status), CatalogErrorKind::kUnavailable) << code;
    EXPECT_EQ(ClassOf(status), ErrorClass::kRetriable) << code;
  }
  EXPECT_EQ(CatalogErrorKindOf(RestError(Response(302, ""), "x")), CatalogErrorKind::kProtocol);
}

TEST(UrlEncode, KeepsUnreservedCharactersOnly) {
  EXPECT_EQ(UrlEncode("a-b_c.d~e"), "a-b_c.d~e");
  EXPECT_EQ(UrlEncode("a b/c\x1f"
                      "d%"),
            "a%20b%2Fc%1Fd%25");
  EXPECT_EQ(UrlEncode("\xc3\xa9"), "%C3%A9");
  EXPECT_EQ(FormEncode({{"grant_type", "client_credentials"}, {"scope", "a b"}}),
            "grant_type=client_credentials&scope=a%20b");
}

// A port on which nothing listens: bound, then closed.
int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

TEST(HttpClient, AConnectionRefusedIsARetriableFailureOfARequestNeverSent) {
  ASSERT_OK(HttpClient::Make({}).status());
  auto client = *HttpClient::Make({});
  HttpRequest request;
  request.method = "POST";
  request.url = "http://127.0.0.1:" + std::to_string(ClosedPort()) + "/v1/config";
  request.body = "{}";
  auto response = client->Send(request);
  ASSERT_FALSE(response.ok());
  const HttpFailure* failure = GetHttpFailure(response.status());
  ASSERT_NE(failure, nullptr) << response.status().ToString();
  EXPECT_EQ(failure->kind(), HttpFailureKind::kConnect);
  EXPECT_FALSE(failure->sent());
  EXPECT_EQ(ClassOf(response.status()), ErrorClass::kRetriable);
}

TEST(RestCatalog, RefusesAUriThatIsNotHttpAndACredentialWithoutASecret) {
  RestCatalogOptions options;
  options.uri = "ftp://x";
  EXPECT_TRUE(RestCatalog::Open(options).status().IsInvalid());
  options.uri = "http://127.0.0.1:1";
  options.credential = "only-an-id";
  EXPECT_TRUE(RestCatalog::Open(options).status().IsInvalid());
}

class SqliteCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("weir-iceberg-sql-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "warehouse");
    db_ = (dir_ / "catalog.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string WriteMetadata(const std::string& name, const std::string& text) {
    auto path = dir_ / "warehouse" / name;
    std::ofstream(path) << text;
    return path.string();
  }

  std::filesystem::path dir_;
  std::string db_;
};

TEST_F(SqliteCatalogTest, CreatesLoadsAndSwapsByCompareAndSwap) {
  auto catalog = *SqlCatalog::OpenSqlite(db_);
  const TableIdent ident{{"lake", "raw"}, "events"};
  const std::string v1 = WriteMetadata("v1.json", R"({"format-version": 2})");
  const std::string v2 = WriteMetadata("v2.json", R"({"format-version": 2, "x": 1})");
  EXPECT_EQ(CatalogErrorKindOf(catalog->CreateTable(ident, v1)), CatalogErrorKind::kNotFound);
  ASSERT_OK(catalog->EnsureNamespace({"lake", "raw"}));
  ASSERT_OK(catalog->EnsureNamespace({"lake", "raw"}));  // existing: fine
  ASSERT_OK(catalog->CreateTable(ident, v1));
  EXPECT_EQ(CatalogErrorKindOf(catalog->CreateTable(ident, v2)), CatalogErrorKind::kAlreadyExists);

  auto loaded = catalog->LoadTable(ident);
  ASSERT_OK(loaded.status());
  EXPECT_EQ(loaded->metadata_location, v1);
  EXPECT_EQ(loaded->metadata, nlohmann::json::parse(R"({"format-version": 2})"));

  auto stale = catalog->SwapMetadataLocation(ident, v2, v1);
  ASSERT_OK(stale.status());
  EXPECT_EQ(stale->outcome, CommitOutcome::kConflict);
  auto swapped = catalog->SwapMetadataLocation(ident, v1, v2);
  ASSERT_OK(swapped.status());
  EXPECT_EQ(swapped->outcome, CommitOutcome::kCommitted);
  EXPECT_EQ(*catalog->LoadMetadataLocation(ident), v2);
  auto again = catalog->SwapMetadataLocation(ident, v1, v2);
  EXPECT_EQ(again->outcome, CommitOutcome::kConflict);

  EXPECT_EQ(CatalogErrorKindOf(catalog->LoadTable({{"lake", "raw"}, "missing"}).status()),
            CatalogErrorKind::kNotFound);
  // Another catalog name in the same database sees nothing.
  SqlCatalogOptions other;
  other.catalog_name = "other";
  auto elsewhere = *SqlCatalog::OpenSqlite(db_, other);
  EXPECT_EQ(CatalogErrorKindOf(elsewhere->LoadTable(ident).status()), CatalogErrorKind::kNotFound);
}

TEST_F(SqliteCatalogTest, ListsTheTablesOfTopLevelNamespacesOfItsCatalogOnly) {
  auto catalog = *SqlCatalog::OpenSqlite(db_);
  auto empty = catalog->ListTables();
  ASSERT_OK(empty.status());
  EXPECT_TRUE(empty->empty());
  const std::string v1 = WriteMetadata("v1.json", R"({"format-version": 2})");
  for (const TableIdent& ident : {TableIdent{{"main"}, "events"}, TableIdent{{"main"}, "a"},
                                  TableIdent{{"raw"}, "z"}, TableIdent{{"lake", "raw"}, "deep"}}) {
    ASSERT_OK(catalog->EnsureNamespace(ident.namespace_levels));
    ASSERT_OK(catalog->CreateTable(ident, v1));
  }
  SqlCatalogOptions other;
  other.catalog_name = "other";
  auto elsewhere = *SqlCatalog::OpenSqlite(db_, other);
  ASSERT_OK(elsewhere->EnsureNamespace({"main"}));
  ASSERT_OK(elsewhere->CreateTable({{"main"}, "theirs"}, v1));
  auto tables = catalog->ListTables();
  ASSERT_OK(tables.status());
  EXPECT_EQ(*tables,
            (std::vector<TableIdent>{{{"main"}, "a"}, {{"main"}, "events"}, {{"raw"}, "z"}}));
}

TEST_F(SqliteCatalogTest, OfWritersRacingOneSwapExactlyOneWins) {
  const TableIdent ident{{"ns"}, "t"};
  {
    auto catalog = *SqlCatalog::OpenSqlite(db_);
    ASSERT_OK(catalog->EnsureNamespace({"ns"}));
    ASSERT_OK(catalog->CreateTable(ident, "/m/v0.json"));
  }
  constexpr int kWriters = 8;
  std::vector<std::unique_ptr<SqlCatalog>> catalogs;
  for (int i = 0; i < kWriters; ++i) catalogs.push_back(*SqlCatalog::OpenSqlite(db_));
  std::atomic<bool> go{false};
  std::vector<CommitOutcome> outcomes(kWriters, CommitOutcome::kUnknown);
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      auto result = catalogs[i]->SwapMetadataLocation(ident, "/m/v0.json",
                                                      "/m/v1-" + std::to_string(i) + ".json");
      if (result.ok()) outcomes[i] = result->outcome;
    });
  }
  go = true;
  for (auto& thread : threads) thread.join();
  int won = -1, committed = 0, conflicts = 0;
  for (int i = 0; i < kWriters; ++i) {
    if (outcomes[i] == CommitOutcome::kCommitted) ++committed, won = i;
    if (outcomes[i] == CommitOutcome::kConflict) ++conflicts;
  }
  EXPECT_EQ(committed, 1);
  EXPECT_EQ(conflicts, kWriters - 1);
  EXPECT_EQ(*catalogs[0]->LoadMetadataLocation(ident), "/m/v1-" + std::to_string(won) + ".json");
}

}  // namespace
}  // namespace weir::lake::iceberg
