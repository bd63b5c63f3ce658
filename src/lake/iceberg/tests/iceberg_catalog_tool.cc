// A command-line front of the catalog clients, for tests that drive them against real servers
// next to pyiceberg (tests/e2e/test_iceberg_catalogs.py). One call per run; the result is one
// JSON object on stdout: {"ok": true, ...} or {"ok": false, "kind", "class", "message"}.
//
//   iceberg_catalog_tool rest URI [--warehouse W] [--token T] [--credential ID:SECRET]
//       [--connect-timeout-ms N] [--timeout-ms N] [--max-body-bytes N] [--stop-after-ms N]
//       [--repeat N --pause-ms M] OP...
//   iceberg_catalog_tool sqlite PATH [--catalog NAME] OP...
//   iceberg_catalog_tool postgres CONNINFO [--catalog NAME] OP...
// OP: config | ensure-namespace NS | load NS TABLE | create NS TABLE (JSON-FILE | LOCATION)
//     | commit NS TABLE JSON-FILE [IDEMPOTENCY-KEY] | swap NS TABLE EXPECTED NEW
// NS is dot-separated levels; a commit file holds {"requirements": [...], "updates": [...]}.
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "lake/iceberg/rest_catalog.h"
#include "lake/iceberg/sql_catalog.h"

namespace iceberg = weir::lake::iceberg;
using Json = nlohmann::ordered_json;

namespace {

std::vector<std::string> Levels(const std::string& text) {
  std::vector<std::string> levels;
  std::stringstream in(text);
  for (std::string level; std::getline(in, level, '.');) levels.push_back(level);
  return levels;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int Fail(const weir::Status& status) {
  auto kind = iceberg::CatalogErrorKindOf(status);
  const auto* http = iceberg::GetHttpFailure(status);
  Json out = {{"ok", false},
              {"kind", kind   ? std::string(iceberg::ToString(*kind))
                       : http ? std::string(iceberg::ToString(http->kind()))
                              : std::string("other")},
              {"class", std::string(weir::ToString(weir::ClassOf(status)))},
              {"message", status.ToString()}};
  std::cout << out.dump() << std::endl;
  return 1;
}

Json TableJson(const iceberg::LoadedTable& table) {
  Json out = {{"metadata_location", table.metadata_location}};
  out["metadata"] = Json::parse(table.metadata.dump(), nullptr, false);
  out["config"] = table.config;
  return out;
}

int Print(Json out) {
  out["ok"] = true;
  std::cout << out.dump() << std::endl;
  return 0;
}

int Commit(const weir::Result<iceberg::CommitResult>& result) {
  if (!result.ok()) return Fail(result.status());
  Json out = {{"outcome", std::string(iceberg::ToString(result->outcome))},
              {"message", result->message}};
  if (result->table) out["table"] = TableJson(*result->table);
  return Print(std::move(out));
}

int RunRestOp(iceberg::RestCatalog& catalog, const std::vector<std::string>& args);

int RunRest(const std::string& uri, std::vector<std::string> args) {
  iceberg::RestCatalogOptions options;
  options.uri = uri;
  int stop_after_ms = 0;
  int repeat = 1;
  int pause_ms = 0;
  while (args.size() >= 2 && args[0].starts_with("--")) {
    const std::string flag = args[0], value = args[1];
    args.erase(args.begin(), args.begin() + 2);
    if (flag == "--warehouse")
      options.warehouse = value;
    else if (flag == "--token")
      options.token = value;
    else if (flag == "--credential")
      options.credential = value;
    else if (flag == "--connect-timeout-ms")
      options.limits.connect_timeout = std::chrono::milliseconds(std::stoll(value));
    else if (flag == "--timeout-ms")
      options.limits.total_timeout = std::chrono::milliseconds(std::stoll(value));
    else if (flag == "--max-body-bytes")
      options.limits.max_response_bytes = std::stoll(value);
    else if (flag == "--stop-after-ms")
      stop_after_ms = std::stoi(value);
    else if (flag == "--repeat")
      repeat = std::stoi(value);
    else if (flag == "--pause-ms")
      pause_ms = std::stoi(value);
    else
      return Fail(weir::Status::Invalid("unknown flag ", flag));
  }
  std::stop_source stop;
  std::jthread stopper;
  if (stop_after_ms > 0) {
    stopper = std::jthread([&stop, stop_after_ms](std::stop_token cancelled) {
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(stop_after_ms);
      while (!cancelled.stop_requested() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      if (!cancelled.stop_requested()) stop.request_stop();
    });
  }
  auto opened = iceberg::RestCatalog::Open(options, stop.get_token());
  if (!opened.ok()) return Fail(opened.status());
  auto& catalog = **opened;
  if (args.empty()) return Fail(weir::Status::Invalid("no operation"));
  int code = 0;
  for (int i = 0; i < repeat; ++i) {  // the same call again on one client: a line each
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
    code = RunRestOp(catalog, args);
  }
  return code;
}

int RunRestOp(iceberg::RestCatalog& catalog, const std::vector<std::string>& args) {
  const std::string op = args[0];
  if (op == "config") {
    return Print({{"properties", catalog.properties()},
                  {"prefix", catalog.prefix()},
                  {"idempotency", catalog.idempotency_supported()},
                  {"table_path", catalog.TablePath({{"a", "b"}, "t"})}});
  }
  if (op == "ensure-namespace" && args.size() == 2) {
    auto status = catalog.EnsureNamespace(Levels(args[1]));
    return status.ok() ? Print(Json::object()) : Fail(status);
  }
  if (args.size() < 3) return Fail(weir::Status::Invalid("missing arguments to ", op));
  const iceberg::TableIdent ident{Levels(args[1]), args[2]};
  if (op == "load") {
    auto table = catalog.LoadTable(ident);
    return table.ok() ? Print(TableJson(*table)) : Fail(table.status());
  }
  if (op == "create" && args.size() == 4) {
    Json spec = Json::parse(ReadFile(args[3]));
    iceberg::CreateTableRequest request;
    request.name = ident.name;
    request.schema_json = spec["schema"].dump();
    if (spec.contains("partition-spec"))
      request.partition_spec_json = spec["partition-spec"].dump();
    if (spec.contains("write-order")) request.write_order_json = spec["write-order"].dump();
    if (spec.contains("location")) request.location = spec["location"];
    if (spec.contains("properties")) {
      for (const auto& [k, v] : spec["properties"].items()) request.properties[k] = v;
    }
    auto table = catalog.CreateTable(ident.namespace_levels, request);
    return table.ok() ? Print(TableJson(*table)) : Fail(table.status());
  }
  if (op == "commit" && args.size() >= 4) {
    Json commit = Json::parse(ReadFile(args[3]));
    return Commit(catalog.CommitTable(ident, commit["requirements"].dump(),
                                      commit["updates"].dump(), args.size() > 4 ? args[4] : ""));
  }
  return Fail(weir::Status::Invalid("unknown operation ", op));
}

int RunSql(const std::string& kind, const std::string& target, std::vector<std::string> args) {
  iceberg::SqlCatalogOptions options;
  if (args.size() >= 2 && args[0] == "--catalog") {
    options.catalog_name = args[1];
    args.erase(args.begin(), args.begin() + 2);
  }
  auto opened = kind == "sqlite" ? iceberg::SqlCatalog::OpenSqlite(target, options)
                                 : iceberg::SqlCatalog::OpenPostgres(target, options);
  if (!opened.ok()) return Fail(opened.status());
  auto& catalog = **opened;
  if (args.size() < 2) return Fail(weir::Status::Invalid("no operation"));
  const std::string op = args[0];
  if (op == "ensure-namespace") {
    auto status = catalog.EnsureNamespace(Levels(args[1]));
    return status.ok() ? Print(Json::object()) : Fail(status);
  }
  if (args.size() < 3) return Fail(weir::Status::Invalid("missing arguments to ", op));
  const iceberg::TableIdent ident{Levels(args[1]), args[2]};
  if (op == "load") {
    auto table = catalog.LoadTable(ident);
    return table.ok() ? Print(TableJson(*table)) : Fail(table.status());
  }
  if (op == "create" && args.size() == 4) {
    auto status = catalog.CreateTable(ident, args[3]);
    return status.ok() ? Print(Json::object()) : Fail(status);
  }
  if (op == "swap" && args.size() == 5) {
    return Commit(catalog.SwapMetadataLocation(ident, args[3], args[4]));
  }
  return Fail(weir::Status::Invalid("unknown operation ", op));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() < 3) {
    std::cerr << "usage: iceberg_catalog_tool (rest URI | sqlite PATH | postgres CONNINFO) OP...\n";
    return 2;
  }
  const std::string kind = args[0], target = args[1];
  args.erase(args.begin(), args.begin() + 2);
  if (kind == "rest") return RunRest(target, std::move(args));
  if (kind == "sqlite" || kind == "postgres") return RunSql(kind, target, std::move(args));
  std::cerr << "unknown catalog kind " << kind << "\n";
  return 2;
}
