#include "app/cli.h"

#include <algorithm>
#include <array>
#include <sstream>

#include <arrow/config.h>
#include <duckdb.h>
#include <librdkafka/rdkafka.h>
#include <CLI/CLI.hpp>

#include "app/ingest_command.h"
#include "app/serve_command.h"
#include "app/version.h"
#include "config/load.h"

namespace weir::app {
namespace {

struct Subcommand {
  const char* name;
  const char* description;
};

// Every subcommand of the product, in the order the help lists them.
constexpr std::array<Subcommand, 5> kSubcommands = {{
    {"ingest", "Consume Kafka topics and land their JSON events in lake tables, exactly once"},
    {"serve", "Serve the lake's tables over the PostgreSQL wire protocol"},
    {"maintain", "Compact files, expire snapshots, delete orphans and check the lake"},
    {"wal", "Inspect and recover the local write-ahead log (WAL mode)"},
    {"check", "Validate a configuration and probe broker, catalog and storage, then exit"},
}};

}  // namespace

std::string VersionText() {
  std::ostringstream text;
  text << "weir " << kVersion << " (" << kBuildType << ")\n"
       << "  DuckDB " << duckdb_library_version() << ", Arrow "
       << arrow::GetBuildInfo().version_string << ", librdkafka " << rd_kafka_version_str() << "\n";
  return text.str();
}

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App cli(
      "weir lands Kafka JSON events in lakehouse tables exactly once and serves them "
      "over the PostgreSQL wire protocol.",
      "weir");
  cli.require_subcommand(0, 1);
  bool show_version = false;
  cli.add_flag("--version", show_version, "Print the version of weir and its libraries");
  std::vector<CLI::App*> commands;
  IngestArgs ingest_args;
  ServeArgs serve_args;
  std::string config_path;
  std::vector<std::string> sets;
  std::map<std::string, std::string> shortcuts;
  for (const Subcommand& sub : kSubcommands) {
    CLI::App* command = cli.add_subcommand(sub.name, sub.description);
    commands.push_back(command);
    if (std::string_view(sub.name) == "ingest" || std::string_view(sub.name) == "check") {
      command->add_option("-c,--config", config_path, "YAML configuration file");
      command->add_option("--set", sets,
                          "Override one setting: name=value (see docs/CONFIGURATION.md)");
      // Shortcuts for the settings most runs give on the command line.
      for (const auto& [flag, setting] : std::vector<std::pair<std::string, std::string>>{
               {"--bootstrap-servers", "kafka.bootstrap_servers"},
               {"--topic", "topic"},
               {"--table", "table"},
               {"--data-path", "storage.data_path"},
               {"--catalog-sqlite", "catalog.sqlite_path"},
               {"--http-port", "http.port"},
               {"--flush-interval", "flush.interval"}}) {
        command->add_option_function<std::string>(
            flag, [&shortcuts, setting](const std::string& v) { shortcuts[setting] = v; },
            "Same as --set " + setting + "=...");
      }
    } else if (std::string_view(sub.name) == "serve") {
      command->add_option("--catalog-sqlite", serve_args.catalog_sqlite,
                          "SQLite DuckLake catalog (default weir-lake/catalog.sqlite)");
      command->add_option("--catalog-postgres", serve_args.catalog_postgres,
                          "PostgreSQL DuckLake catalog (a libpq connection string)");
      command->add_option("--host", serve_args.host, "Address to listen on (default 127.0.0.1)");
      command->add_option("--port", serve_args.port, "Port to listen on (default 5432; 0: any)");
      command->add_option("--tls-dir", serve_args.tls_dir,
                          "Certificate, key and users file (created when missing)");
      command->add_option("--max-connections", serve_args.max_connections,
                          "Connections in total (default 100; more get FATAL 53300)");
      command->add_option("--max-connections-per-ip", serve_args.max_connections_per_ip,
                          "Connections per client address (default 20)");
      command->add_option("--max-failed-logins", serve_args.max_failed_logins,
                          "Failed logins per address within 60 s before a ban (default 5)");
      command->add_option("--ban-seconds", serve_args.ban_seconds,
                          "How long a banned address is refused (default 300)");
      command->add_option("--statement-timeout-ms", serve_args.statement_timeout_ms,
                          "Default statement_timeout in ms (default 0: none; 57014 when hit)");
      command->add_option("--idle-session-timeout", serve_args.idle_session_timeout_s,
                          "Seconds a session may idle before FATAL 57P05 (default 3600; 0: never)");
      command->add_option("--shutdown-timeout", serve_args.shutdown_timeout_s,
                          "Seconds running statements get on SIGTERM before 57P01 (default 30)");
      command->add_option("--session-memory-mb", serve_args.session_memory_mb,
                          "MiB of buffered results a session may hold (default 256; else 53200)");
      command->add_option("--memory-limit", serve_args.memory_limit,
                          "DuckDB memory_limit for the whole server, e.g. 4GB (default DuckDB's)");
      command->add_option("--threads", serve_args.threads, "DuckDB worker threads (default all)");
      command->add_option("--http-port", serve_args.http_port,
                          "Port of /metrics, /healthz and /readyz (default off)");
      command->add_flag("--query-log,!--no-query-log", serve_args.query_log,
                        "One log line per statement (default on)");
      command->add_option("--add-user", serve_args.add_user,
                          "Add or replace a user (password from $WEIR_SERVE_NEW_PASSWORD, else "
                          "generated and printed once), then exit");
      command->add_option("--role", serve_args.role, "Role of --add-user: read or write")
          ->check(CLI::IsMember({"read", "write"}));
    } else {
      // Options arrive with each subcommand's implementation; keep extra arguments so that an
      // unimplemented subcommand still answers with its own message rather than a parse error.
      command->allow_extras();
    }
  }

  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses a reversed list
  try {
    cli.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    out << cli.help();
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // help of a subcommand
      out << cli.help();
      return kExitOk;
    }
    err << "weir: " << e.what() << "\nRun 'weir --help' for the subcommands.\n";
    return kExitUsage;
  }

  if (show_version) {
    out << VersionText();
    return kExitOk;
  }
  const auto chosen =
      std::find_if(commands.begin(), commands.end(), [](const CLI::App* c) { return c->parsed(); });
  if (chosen == commands.end()) {
    out << cli.help();
    return kExitUsage;
  }
  const std::string name = (*chosen)->get_name();
  if (name == "ingest" || name == "check") {
    if (!config_path.empty()) ingest_args.config_path = config_path;
    ingest_args.overrides = shortcuts;
    for (const auto& set : sets) {
      if (auto added = config::AddOverride(set, &ingest_args.overrides); !added.ok()) {
        err << "weir " << name << ": --set " << set << ": " << added.message() << "\n";
        return kExitUsage;
      }
    }
    return name == "ingest" ? RunIngest(ingest_args, out, err) : RunCheck(ingest_args, out, err);
  }
  if (name == "serve") return RunServe(serve_args, out, err);
  err << "weir " << name << ": not implemented yet in weir " << kVersion << "\n";
  return kExitNotImplemented;
}

}  // namespace weir::app
