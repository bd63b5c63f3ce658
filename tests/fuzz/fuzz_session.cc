// Fuzz target: a whole ProtocolSession (serve/protocol_session.h) — simple and extended query,
// COPY both ways, cursors, settings, transactions — fed one client's messages through an
// in-memory SessionIo, over a small DuckLake (a SQLite catalog in a temporary directory, two
// tables of a few rows) created once per process, as a write user or a read user.
//
// Input: byte 0 holds flags: bit 0 a read user (else a write user); bit 1 the rest is the raw
// byte stream after authentication (else it is a list of messages, each a type byte, a 16-bit
// big-endian body length and the body, framed here so mutations keep the framing); bit 2 the
// input's end is the idle-session timeout rather than the peer leaving. WEIR_FUZZ_TRACE=1 prints
// every message the session writes (to read a reproducer).
//
// Checks, besides the sanitizers: everything the session writes is a well-formed stream of
// backend messages (backend_stream.h). Bounds, so no input runs long or grows without limit:
// a statement timeout of 250 ms (the watchdog thread below plays the server's), every
// statement cancelled once the input has run 2 s, at most 32 MiB of output (then the client
// "goes away"), DuckDB's memory limit 512 MB with one thread, 8 MiB of session memory, and
// the lake made anew once its directory passes 32 MiB.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include <duckdb.h>
#include <spdlog/spdlog.h>

#include "backend_stream.h"
#include "lake/duckdb_engine.h"
#include "observe/metrics_registry.h"
#include "serve/engine.h"
#include "serve/serve_metrics.h"
#include "serve/session/protocol_session.h"

namespace serve = weir::serve;
namespace pgwire = weir::serve::pgwire;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

constexpr milliseconds kStatementTimeout{250};
constexpr milliseconds kInputBudget{2000};
constexpr size_t kMaxOutputBytes = 32u << 20;
constexpr size_t kSessionMemory = 8u << 20;
constexpr size_t kMaxMessageBytes = 1u << 20;
constexpr uintmax_t kMaxLakeBytes = 32u << 20;

constexpr const char* kLakeSql[] = {
    "CREATE TABLE t (id BIGINT, name VARCHAR, amount DECIMAL(10, 2), ok BOOLEAN, day DATE, "
    "ts TIMESTAMP, data BLOB, score DOUBLE, tags INTEGER[])",
    "INSERT INTO t VALUES (1, 'one', 1.50, true, DATE '2024-01-01', "
    "TIMESTAMP '2024-01-01 10:00:00', '\\x01\\x02'::BLOB, 0.5, [1, 2]), "
    "(2, 'two', -20.25, false, DATE '1999-12-31', TIMESTAMP '1999-12-31 23:59:59.5', "
    "''::BLOB, -1e300, []), (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), "
    "(4, 'quote''s\ttab', 0, true, DATE '2038-01-19', TIMESTAMP '2038-01-19 03:14:07', "
    "'x'::BLOB, 'NaN'::DOUBLE, [NULL, 3])",
    "CREATE TABLE u (k INTEGER, v VARCHAR)",
    "INSERT INTO u VALUES (1, 'a'), (2, 'b'), (3, NULL)",
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "fuzz_session: %s\n", what.c_str());
  std::abort();
}

// The lake and its engine; made anew when the lake has grown (between inputs only).
struct Lake {
  std::filesystem::path directory;
  std::unique_ptr<serve::Engine> engine;
};

Lake* lake = nullptr;  // never destroyed: the watchdog and DuckDB's threads outlive main
weir::observe::MetricsRegistry* registry = nullptr;
serve::ServeMetrics* metrics = nullptr;
std::atomic<bool> stopping{false};
uint64_t inputs = 0;

// The server's watchdog, for the session of the running input.
std::mutex watched_mutex;
serve::ProtocolSession* watched = nullptr;
steady_clock::time_point watched_until;

void Watchdog() {
  while (true) {
    std::this_thread::sleep_for(milliseconds(10));
    std::lock_guard lock(watched_mutex);
    if (watched == nullptr) continue;
    const auto now = steady_clock::now();
    watched->CheckDeadline(now);
    if (now >= watched_until) watched->Cancel();
  }
}

// Creates the lake (as ingest would: DuckDB with DuckLake, the data under <dir>/data) and its
// tables, with a DuckDB database of its own that is closed before the engine opens the lake.
void CreateLake(const std::filesystem::path& directory, const std::string& extensions) {
  duckdb_config config = nullptr;
  duckdb_create_config(&config);
  duckdb_set_config(config, "autoinstall_known_extensions", "false");
  duckdb_set_config(config, "autoload_known_extensions", "false");
  duckdb_set_config(config, "extension_directory", extensions.c_str());
  duckdb_database db = nullptr;
  char* error = nullptr;
  if (duckdb_open_ext(nullptr, &db, config, &error) != DuckDBSuccess) {
    Die(std::string("opening DuckDB: ") + (error != nullptr ? error : "?"));
  }
  duckdb_destroy_config(&config);
  duckdb_connection conn = nullptr;
  if (duckdb_connect(db, &conn) != DuckDBSuccess) Die("connecting to DuckDB");
  const auto run = [&](const std::string& sql) {
    duckdb_result result;
    if (duckdb_query(conn, sql.c_str(), &result) != DuckDBSuccess) {
      Die("creating the lake: " + sql + ": " + duckdb_result_error(&result));
    }
    duckdb_destroy_result(&result);
  };
  run("LOAD ducklake; LOAD sqlite_scanner");
  run("ATTACH 'ducklake:sqlite:" + (directory / "catalog.sqlite").string() +
      "' AS lake (DATA_PATH '" + (directory / "data").string() + "/'); USE lake");
  for (const char* sql : kLakeSql) run(sql);
  duckdb_disconnect(&conn);
  duckdb_close(&db);
}

void MakeLake() {
  if (lake != nullptr) {
    lake->engine.reset();
    std::filesystem::remove_all(lake->directory);
  } else {
    lake = new Lake();
  }
  std::string temp = (std::filesystem::temp_directory_path() / "weir-fuzz-lake-XXXXXX").string();
  if (mkdtemp(temp.data()) == nullptr) Die("mkdtemp failed");
  lake->directory = temp;
  serve::LakeAttachment attachment;
  attachment.catalog = "sqlite:" + (lake->directory / "catalog.sqlite").string();
  attachment.extension_directory = weir::lake::DefaultExtensionDirectory();
  attachment.memory_limit = "512MB";
  attachment.threads = 1;
  CreateLake(lake->directory, attachment.extension_directory);
  auto engine = serve::Engine::Open(attachment);
  if (!engine.ok()) Die("opening the engine: " + engine.status().ToString());
  lake->engine = std::move(*engine);
}

uintmax_t LakeBytes() {
  uintmax_t total = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(lake->directory, ec)) {
    if (entry.is_regular_file(ec)) total += entry.file_size(ec);
  }
  return total;
}

void RemoveLake() {
  if (lake != nullptr) {
    std::error_code ec;
    std::filesystem::remove_all(lake->directory, ec);
  }
}

// The client's bytes on the wire: the input as is (raw), or its messages framed.
std::string WireBytes(std::string_view rest, bool raw) {
  if (raw) return std::string(rest);
  std::string wire;
  size_t at = 0;
  while (at < rest.size()) {
    const char type = rest[at++];
    size_t length = 0;
    if (at + 2 <= rest.size()) {
      length = (static_cast<size_t>(static_cast<unsigned char>(rest[at])) << 8) |
               static_cast<unsigned char>(rest[at + 1]);
      at += 2;
    } else {
      at = rest.size();
    }
    length = std::min(length, rest.size() - at);
    const auto framed = static_cast<uint32_t>(length + 4);
    wire.push_back(type);
    for (int shift = 24; shift >= 0; shift -= 8) {
      wire.push_back(static_cast<char>(framed >> shift));
    }
    wire.append(rest.substr(at, length));
    at += length;
  }
  return wire;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);  // the query log is formatted, not printed
  registry = new weir::observe::MetricsRegistry();
  metrics = new serve::ServeMetrics(*registry);
  MakeLake();
  std::atexit(RemoveLake);
  std::thread(Watchdog).detach();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (++inputs % 64 == 0 && LakeBytes() > kMaxLakeBytes) MakeLake();
  const bool read_user = (data[0] & 1) != 0;
  const bool raw = (data[0] & 2) != 0;
  const bool idle_at_end = (data[0] & 4) != 0;
  const std::string wire =
      WireBytes(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1), raw);

  auto session = lake->engine->Connect(kSessionMemory, read_user);
  if (!session.ok()) Die("connecting: " + session.status().ToString());
  const std::string user = read_user ? "fuzz_reader" : "fuzz_writer";
  (void)(*session)->SetVariable("weir_user", user);
  (void)(*session)->SetVariable("weir_backend_pid", "4242");

  pgwire::FrameReader reader(kMaxMessageBytes);
  reader.Feed(wire);
  weir::fuzz::BackendStream backend;
  backend.set_trace(std::getenv("WEIR_FUZZ_TRACE") != nullptr);
  size_t written = 0;
  bool idle_expired = false;
  serve::SessionIo io;
  io.read = [&](milliseconds) -> weir::Result<std::optional<pgwire::Frame>> {
    auto frame = reader.Next();
    if (frame.ok() && !*frame) idle_expired = idle_at_end;
    if (frame.ok() && *frame && std::string_view("dcf").find((**frame).type) == std::string::npos) {
      backend.set_described_rows((**frame).type == 'Q');
    }
    return frame;
  };
  io.write = [&](std::string_view bytes) {
    backend.Feed(bytes);
    written += bytes.size();
    return written <= kMaxOutputBytes;
  };
  io.idle_expired = [&] { return idle_expired; };

  serve::SessionOptions options;
  options.user = user;
  options.application = "fuzz";
  options.address = "127.0.0.1";
  options.statement_timeout = kStatementTimeout;
  options.query_log = true;
  std::optional<pgwire::ErrorFields> last;
  {
    serve::ProtocolSession protocol(session->get(), std::move(io), options, metrics, &stopping);
    {
      std::lock_guard lock(watched_mutex);
      watched = &protocol;
      watched_until = steady_clock::now() + kInputBudget;
    }
    last = protocol.Run();
    std::lock_guard lock(watched_mutex);
    watched = nullptr;
  }
  if (last) {  // the FATAL the server sends last
    pgwire::MessageWriter out;
    out.ErrorResponse(*last);
    backend.Feed(out.Take());
  }
  return 0;
}
