// Wire benchmarks of `weir serve` (issue 4), as a client over TLS with SCRAM-SHA-256:
//   (a) `SELECT 1` round trips on one open session, simple (PQexec) and extended
//       (PQexecPrepared) protocol: p50/p99 µs;
//   (b) connection setup to the first result (TCP + TLS + SCRAM + `SELECT 1`): p50/p99 ms;
//   (c) streaming a large result (default 10,000,000 rows of 5 columns) in text and binary
//       format: rows/s, read by a minimal reader so that the client is not the bottleneck;
//   (d) the same query in-process through the DuckDB C API (streaming, every value touched),
//       and the ratio wire / in-process.
//
//   bench_serve --conninfo "host=127.0.0.1 port=P user=weir dbname=lake sslmode=require"
//       [--round-trips 5000] [--warmup 100] [--connections 200] [--rows 10000000]
//       [--parts select1,connect,stream,inprocess] [--formats text,binary] [--libpq-rows]
//
// The password comes from the conninfo or PGPASSWORD. Prints a table, then one JSON line.
//
// The stream reader: libpq opens the session (TLS, SCRAM), then the benchmark writes
// Parse/Bind(result format)/Execute/Sync itself on libpq's OpenSSL object and reads the answer
// with SSL_read, walking the messages and summing the length of every field of every DataRow.
// libpq's own row-at-a-time path (PQsetSingleRowMode, one PGresult per row) costs more CPU per
// row than the server does; it is measured too with --libpq-rows, as a reference only.
#include <arpa/inet.h>
#include <duckdb.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bench_util.h"

namespace weir {
namespace {

using bench::Die;
using bench::SplitComma;

struct Options {
  std::string conninfo;
  int round_trips = 5000;
  int warmup = 100;
  int connections = 200;
  int64_t rows = 10'000'000;
  std::vector<std::string> parts = {"select1", "connect", "stream", "inprocess"};
  std::vector<std::string> formats = {"text", "binary"};
  bool libpq_rows = false;
};

Options ParseArgs(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die("missing value after " + arg);
      return argv[++i];
    };
    if (arg == "--conninfo") {
      options.conninfo = value();
    } else if (arg == "--round-trips") {
      options.round_trips = std::stoi(value());
    } else if (arg == "--warmup") {
      options.warmup = std::stoi(value());
    } else if (arg == "--connections") {
      options.connections = std::stoi(value());
    } else if (arg == "--rows") {
      options.rows = std::stoll(value());
    } else if (arg == "--parts") {
      options.parts = SplitComma(value());
    } else if (arg == "--formats") {
      options.formats = SplitComma(value());
    } else if (arg == "--libpq-rows") {
      options.libpq_rows = true;
    } else {
      Die("unknown argument " + arg +
          " (--conninfo C --round-trips N --warmup N --connections N --rows N"
          " --parts select1,connect,stream,inprocess --formats text,binary --libpq-rows)");
    }
  }
  const bool needs_server = options.parts != std::vector<std::string>{"inprocess"};
  if (needs_server && options.conninfo.empty()) Die("--conninfo is required");
  return options;
}

bool Has(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Latency {
  double p50 = 0, p99 = 0, mean = 0, max = 0;
};

// Nearest-rank percentiles.
Latency Summarise(std::vector<double> samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  auto rank = [&](double p) {
    const auto index = static_cast<size_t>(std::ceil(p * static_cast<double>(samples.size())));
    return samples[std::clamp<size_t>(index, 1, samples.size()) - 1];
  };
  double sum = 0;
  for (double sample : samples) sum += sample;
  return {rank(0.50), rank(0.99), sum / static_cast<double>(samples.size()), samples.back()};
}

struct ConnCloser {
  void operator()(PGconn* conn) const { PQfinish(conn); }
};
using Conn = std::unique_ptr<PGconn, ConnCloser>;
struct ResultCloser {
  void operator()(PGresult* result) const { PQclear(result); }
};
using PgResult = std::unique_ptr<PGresult, ResultCloser>;

Conn Connect(const std::string& conninfo) {
  Conn conn(PQconnectdb(conninfo.c_str()));
  if (conn == nullptr) Die("PQconnectdb: out of memory");
  if (PQstatus(conn.get()) != CONNECTION_OK)
    Die("connect: " + std::string(PQerrorMessage(conn.get())));
  return conn;
}

void ExpectOne(const PgResult& result, PGconn* conn) {
  if (PQresultStatus(result.get()) != PGRES_TUPLES_OK || PQntuples(result.get()) != 1 ||
      std::strcmp(PQgetvalue(result.get(), 0, 0), "1") != 0) {
    Die("SELECT 1: " + std::string(PQerrorMessage(conn)));
  }
}

// (a) `SELECT 1` round trips in µs, simple protocol when `prepared` is false, else extended.
Latency SelectOne(PGconn* conn, bool prepared, int round_trips, int warmup) {
  if (prepared) {
    PgResult made(PQprepare(conn, "select_one", "SELECT 1", 0, nullptr));
    if (PQresultStatus(made.get()) != PGRES_COMMAND_OK) {
      Die("PQprepare: " + std::string(PQerrorMessage(conn)));
    }
  }
  std::vector<double> samples;
  samples.reserve(static_cast<size_t>(round_trips));
  for (int i = 0; i < warmup + round_trips; ++i) {
    const auto start = Clock::now();
    PgResult result(prepared ? PQexecPrepared(conn, "select_one", 0, nullptr, nullptr, nullptr, 0)
                             : PQexec(conn, "SELECT 1"));
    const double micros = SecondsSince(start) * 1e6;
    ExpectOne(result, conn);
    if (i >= warmup) samples.push_back(micros);
  }
  return Summarise(std::move(samples));
}

// (b) PQconnectdb to the first `SELECT 1` result, in ms (PQfinish is not timed); and the part
// of it until PQconnectdb returned (TCP + TLS + SCRAM + session start).
struct ConnectLatency {
  Latency to_first_result;
  Latency to_ready;
};

ConnectLatency ConnectToFirstResult(const std::string& conninfo, int connections) {
  std::vector<double> first_result, ready;
  for (int i = 0; i < connections + 3; ++i) {
    const auto start = Clock::now();
    Conn conn = Connect(conninfo);
    const double connected = SecondsSince(start) * 1e3;
    PgResult result(PQexec(conn.get(), "SELECT 1"));
    const double millis = SecondsSince(start) * 1e3;
    ExpectOne(result, conn.get());
    if (i < 3) continue;
    first_result.push_back(millis);
    ready.push_back(connected);
  }
  return {Summarise(std::move(first_result)), Summarise(std::move(ready))};
}

struct StreamStats {
  int64_t rows = 0;
  int64_t value_bytes = 0;  // the sum of every field's length (NULLs count 0)
  int64_t wire_bytes = 0;   // every backend message from Parse to ReadyForQuery
  double first_row_s = 0;
  double seconds = 0;
  double RowsPerSecond() const { return seconds > 0 ? static_cast<double>(rows) / seconds : 0; }
  // The rate once rows flow: tells a server that materialises before sending from one that
  // streams.
  double RowsPerSecondAfterFirst() const {
    return seconds > first_row_s ? static_cast<double>(rows - 1) / (seconds - first_row_s) : 0;
  }
};

void AppendInt16(std::string& out, int16_t value) {
  const uint16_t be = htons(static_cast<uint16_t>(value));
  out.append(reinterpret_cast<const char*>(&be), 2);
}

void AppendInt32(std::string& out, int32_t value) {
  const uint32_t be = htonl(static_cast<uint32_t>(value));
  out.append(reinterpret_cast<const char*>(&be), 4);
}

int32_t ReadInt32(const char* at) {
  uint32_t be;
  std::memcpy(&be, at, 4);
  return static_cast<int32_t>(ntohl(be));
}

int16_t ReadInt16(const char* at) {
  uint16_t be;
  std::memcpy(&be, at, 2);
  return static_cast<int16_t>(ntohs(be));
}

void AppendMessage(std::string& out, char type, const std::string& body) {
  out.push_back(type);
  AppendInt32(out, static_cast<int32_t>(body.size() + 4));
  out += body;
}

// Parse (unnamed) + Bind (no parameters, one result format for all columns) + Execute (all
// rows) + Sync.
std::string ExtendedQuery(const std::string& sql, int16_t result_format) {
  std::string out;
  AppendMessage(out, 'P', std::string("\0", 1) + sql + std::string("\0", 1) + std::string(2, '\0'));
  std::string bind(2, '\0');  // portal "", statement ""
  AppendInt16(bind, 0);       // parameter format codes
  AppendInt16(bind, 0);       // parameters
  AppendInt16(bind, 1);       // one result format code for every column
  AppendInt16(bind, result_format);
  AppendMessage(out, 'B', bind);
  std::string execute(1, '\0');
  AppendInt32(execute, 0);
  AppendMessage(out, 'E', execute);
  AppendMessage(out, 'S', "");
  return out;
}

std::string ErrorText(const char* body, size_t size) {
  std::string sqlstate, message;
  size_t at = 0;
  while (at < size && body[at] != '\0') {
    const char field = body[at++];
    const std::string value(body + at);
    at += value.size() + 1;
    if (field == 'C') sqlstate = value;
    if (field == 'M') message = value;
  }
  return sqlstate + " " + message;
}

// (c) The query through the raw reader on libpq's TLS session, result format 0 (text) or 1.
StreamStats StreamRaw(PGconn* conn, const std::string& sql, int16_t format) {
  auto* ssl = static_cast<SSL*>(PQsslStruct(conn, "OpenSSL"));
  if (ssl == nullptr) Die("the session is not on TLS (sslmode=require)");
  // libpq keeps its socket non-blocking; the reader blocks in SSL_read instead of polling.
  const int fd = PQsocket(conn);
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) Die("fcntl on the socket");

  StreamStats stats;
  const std::string request = ExtendedQuery(sql, format);
  const auto start = Clock::now();
  if (SSL_write(ssl, request.data(), static_cast<int>(request.size())) !=
      static_cast<int>(request.size())) {
    Die("SSL_write failed");
  }
  std::vector<char> buffer(1 << 20);
  size_t begin = 0, end = 0;
  bool ready = false;
  std::string tag;
  while (!ready) {
    // Walk every complete message in the buffer.
    while (end - begin >= 5) {
      const char* message = buffer.data() + begin;
      const auto length = static_cast<size_t>(ReadInt32(message + 1));
      if (end - begin < 1 + length) break;
      const char* body = message + 5;
      const size_t size = length - 4;
      switch (message[0]) {
        case 'D': {
          if (stats.rows++ == 0) stats.first_row_s = SecondsSince(start);
          const int fields = ReadInt16(body);
          const char* at = body + 2;
          for (int f = 0; f < fields; ++f) {
            const int32_t field_length = ReadInt32(at);
            at += 4;
            if (field_length > 0) {
              stats.value_bytes += field_length;
              at += field_length;
            }
          }
          break;
        }
        case 'E':
          Die("server error: " + ErrorText(body, size));
        case 'C':
          tag.assign(body, size > 0 ? size - 1 : 0);
          break;
        case 'Z':
          ready = true;
          break;
        default:  // ParseComplete, BindComplete, RowDescription, notices
          break;
      }
      stats.wire_bytes += static_cast<int64_t>(1 + length);
      begin += 1 + length;
    }
    if (ready) break;
    if (begin == end) {
      begin = end = 0;
    } else if (buffer.size() - end < 64 * 1024) {
      std::memmove(buffer.data(), buffer.data() + begin, end - begin);
      end -= begin;
      begin = 0;
      if (end >= 5) {  // a message larger than the buffer
        const auto needed = 1 + static_cast<size_t>(ReadInt32(buffer.data() + 1));
        if (needed + 64 * 1024 > buffer.size()) buffer.resize(needed + 64 * 1024);
      }
    }
    const int got = SSL_read(ssl, buffer.data() + end, static_cast<int>(buffer.size() - end));
    if (got <= 0) Die("SSL_read: error " + std::to_string(SSL_get_error(ssl, got)));
    end += static_cast<size_t>(got);
  }
  stats.seconds = SecondsSince(start);
  if (fcntl(fd, F_SETFL, flags) < 0) Die("fcntl on the socket");
  if (tag != "SELECT " + std::to_string(stats.rows)) {
    Die("command tag '" + tag + "' after " + std::to_string(stats.rows) + " rows");
  }
  return stats;
}

// The query through libpq's single-row mode (one PGresult per row), as a reference.
StreamStats StreamLibpqRows(PGconn* conn, const std::string& sql, int format) {
  StreamStats stats;
  const auto start = Clock::now();
  if (PQsendQueryParams(conn, sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr, format) != 1 ||
      PQsetSingleRowMode(conn) != 1) {
    Die("PQsendQueryParams: " + std::string(PQerrorMessage(conn)));
  }
  while (PGresult* raw = PQgetResult(conn)) {
    PgResult result(raw);
    const auto status = PQresultStatus(raw);
    if (status == PGRES_SINGLE_TUPLE) {
      if (stats.rows++ == 0) stats.first_row_s = SecondsSince(start);
      for (int c = 0; c < PQnfields(raw); ++c) stats.value_bytes += PQgetlength(raw, 0, c);
    } else if (status != PGRES_TUPLES_OK) {
      Die("single-row fetch: " + std::string(PQerrorMessage(conn)));
    }
  }
  stats.seconds = SecondsSince(start);
  return stats;
}

// (d) The query in-process: DuckDB in memory, streaming result, every value read.
StreamStats InProcess(const std::string& sql) {
  duckdb_database db = nullptr;
  duckdb_connection con = nullptr;
  if (duckdb_open(nullptr, &db) != DuckDBSuccess || duckdb_connect(db, &con) != DuckDBSuccess) {
    Die("cannot open DuckDB in memory");
  }
  duckdb_prepared_statement prepared = nullptr;
  if (duckdb_prepare(con, sql.c_str(), &prepared) != DuckDBSuccess) {
    Die("prepare: " + std::string(duckdb_prepare_error(prepared)));
  }
  StreamStats stats;
  double checksum = 0;  // keeps the reads from being optimised away
  const auto start = Clock::now();
  duckdb_pending_result pending = nullptr;
  duckdb_result result;
  if (duckdb_pending_prepared_streaming(prepared, &pending) != DuckDBSuccess ||
      duckdb_execute_pending(pending, &result) != DuckDBSuccess) {
    Die("execute: " + std::string(duckdb_pending_error(pending)));
  }
  const idx_t columns = duckdb_column_count(&result);
  std::vector<duckdb_type> types;
  for (idx_t c = 0; c < columns; ++c) types.push_back(duckdb_column_type(&result, c));
  while (duckdb_data_chunk chunk = duckdb_fetch_chunk(result)) {
    const idx_t size = duckdb_data_chunk_get_size(chunk);
    if (stats.rows == 0) stats.first_row_s = SecondsSince(start);
    for (idx_t c = 0; c < columns; ++c) {
      duckdb_vector vector = duckdb_data_chunk_get_vector(chunk, c);
      void* data = duckdb_vector_get_data(vector);
      uint64_t* validity = duckdb_vector_get_validity(vector);
      for (idx_t r = 0; r < size; ++r) {
        if (validity != nullptr && !duckdb_validity_row_is_valid(validity, r)) continue;
        switch (types[c]) {
          case DUCKDB_TYPE_BIGINT:
            checksum += static_cast<double>(static_cast<int64_t*>(data)[r]);
            stats.value_bytes += 8;
            break;
          case DUCKDB_TYPE_DOUBLE:
            checksum += static_cast<double*>(data)[r];
            stats.value_bytes += 8;
            break;
          case DUCKDB_TYPE_BOOLEAN:
            checksum += static_cast<bool*>(data)[r] ? 1 : 0;
            stats.value_bytes += 1;
            break;
          case DUCKDB_TYPE_VARCHAR: {
            const auto& text = static_cast<duckdb_string_t*>(data)[r];
            stats.value_bytes += text.value.inlined.length;
            checksum += static_cast<unsigned char>(duckdb_string_is_inlined(text)
                                                       ? text.value.inlined.inlined[0]
                                                       : text.value.pointer.ptr[0]);
            break;
          }
          default:
            Die("unexpected column type " + std::to_string(types[c]));
        }
      }
    }
    stats.rows += static_cast<int64_t>(size);
    duckdb_destroy_data_chunk(&chunk);
  }
  stats.seconds = SecondsSince(start);
  duckdb_destroy_result(&result);
  duckdb_destroy_pending(&pending);
  duckdb_destroy_prepare(&prepared);
  duckdb_disconnect(&con);
  duckdb_close(&db);
  if (checksum == -1) std::printf("\n");  // never true; uses the checksum
  return stats;
}

std::string StreamSql(int64_t rows) {
  return "SELECT range AS a, range * 2 AS b, range::DOUBLE / 3 AS c, 'row ' || range AS d, "
         "range % 2 = 0 AS e FROM range(" +
         std::to_string(rows) + ")";
}

std::string LatencyJson(const Latency& l) {
  char out[160];
  std::snprintf(out, sizeof(out), "{\"p50\":%.3f,\"p99\":%.3f,\"mean\":%.3f,\"max\":%.3f}", l.p50,
                l.p99, l.mean, l.max);
  return out;
}

std::string StreamJson(const StreamStats& s) {
  char out[320];
  std::snprintf(out, sizeof(out),
                "{\"rows\":%lld,\"seconds\":%.4f,\"rows_per_s\":%.0f,\"first_row_s\":%.4f,"
                "\"rows_per_s_after_first\":%.0f,\"value_bytes\":%lld,\"wire_bytes\":%lld}",
                static_cast<long long>(s.rows), s.seconds, s.RowsPerSecond(), s.first_row_s,
                s.RowsPerSecondAfterFirst(), static_cast<long long>(s.value_bytes),
                static_cast<long long>(s.wire_bytes));
  return out;
}

void PrintLatency(const char* what, const char* unit, const Latency& l) {
  std::printf("%-44s p50 %9.1f  p99 %9.1f  mean %9.1f  max %9.1f %s\n", what, l.p50, l.p99, l.mean,
              l.max, unit);
}

void PrintStream(const std::string& what, const StreamStats& s) {
  std::printf("%-44s %11.0f rows/s  %7.3f s  first row %7.3f s  then %11.0f rows/s", what.c_str(),
              s.RowsPerSecond(), s.seconds, s.first_row_s, s.RowsPerSecondAfterFirst());
  if (s.wire_bytes > 0) std::printf("  %7.1f MB wire", static_cast<double>(s.wire_bytes) / 1e6);
  std::printf("\n");
}

int Run(const Options& options) {
  std::vector<std::string> json;
  if (Has(options.parts, "select1")) {
    Conn conn = Connect(options.conninfo);
    const Latency simple = SelectOne(conn.get(), false, options.round_trips, options.warmup);
    const Latency extended = SelectOne(conn.get(), true, options.round_trips, options.warmup);
    PrintLatency("SELECT 1, simple protocol (PQexec)", "µs", simple);
    PrintLatency("SELECT 1, extended protocol (PQexecPrepared)", "µs", extended);
    json.push_back("\"select1_simple_us\":" + LatencyJson(simple));
    json.push_back("\"select1_extended_us\":" + LatencyJson(extended));
  }
  if (Has(options.parts, "connect")) {
    const ConnectLatency setup = ConnectToFirstResult(options.conninfo, options.connections);
    PrintLatency("connect (TLS + SCRAM) to first result", "ms", setup.to_first_result);
    PrintLatency("  of which PQconnectdb", "ms", setup.to_ready);
    json.push_back("\"connect_ms\":" + LatencyJson(setup.to_first_result));
    json.push_back("\"connect_ready_ms\":" + LatencyJson(setup.to_ready));
  }
  const std::string sql = StreamSql(options.rows);
  std::vector<std::pair<std::string, double>> wire_rates;  // format, rows/s
  if (Has(options.parts, "stream")) {
    Conn conn = Connect(options.conninfo);
    for (const auto& format : options.formats) {
      if (format != "text" && format != "binary") Die("unknown format " + format);
      const int16_t code = format == "binary" ? 1 : 0;
      const StreamStats raw = StreamRaw(conn.get(), sql, code);
      if (raw.rows != options.rows) Die("streamed " + std::to_string(raw.rows) + " rows");
      PrintStream("stream " + format + " (raw reader)", raw);
      json.push_back("\"stream_" + format + "\":" + StreamJson(raw));
      wire_rates.emplace_back(format, raw.RowsPerSecond());
      if (options.libpq_rows) {
        const StreamStats rows = StreamLibpqRows(conn.get(), sql, code);
        PrintStream("stream " + format + " (libpq single-row mode)", rows);
        json.push_back("\"stream_" + format + "_libpq_rows\":" + StreamJson(rows));
      }
    }
  }
  if (Has(options.parts, "inprocess")) {
    const StreamStats local = InProcess(sql);
    if (local.rows != options.rows) Die("in-process: " + std::to_string(local.rows) + " rows");
    PrintStream("in-process (DuckDB C API, streaming)", local);
    json.push_back("\"inprocess\":" + StreamJson(local));
    for (const auto& [format, rate] : wire_rates) {
      const double ratio = rate / local.RowsPerSecond();
      std::printf("wire %s / in-process: %.1f %%\n", format.c_str(), 100.0 * ratio);
      char field[64];
      std::snprintf(field, sizeof(field), "\"ratio_%s\":%.4f", format.c_str(), ratio);
      json.push_back(field);
    }
  }
  std::string line = "{";
  for (size_t i = 0; i < json.size(); ++i) line += (i ? "," : "") + json[i];
  std::printf("%s}\n", line.c_str());
  return 0;
}

}  // namespace
}  // namespace weir

int main(int argc, char** argv) { return weir::Run(weir::ParseArgs(argc, argv)); }
