#include "app/cli.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <arrow/config.h>
#include <duckdb.h>
#include <librdkafka/rdkafka.h>
#include <CLI/CLI.hpp>

#include "app/check_command.h"
#include "app/ingest_command.h"
#include "app/maintain_command.h"
#include "app/serve_command.h"
#include "app/version.h"
#include "app/wal_command.h"
#include "config/load.h"
#include "config/setting_table.h"

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

// The command-line shortcuts of settings, for the subcommands listed with each: `--port 5433`
// is `--set serve.port=5433`. A bare number given to a flag with a unit gets that unit
// (`--idle-session-timeout 2` is 2s). One table, so a flag means the same wherever it exists
// (`--http-port` is each command's own HTTP port).
struct Shortcut {
  const char* flag;
  const char* setting;
  const char* unit;
  const char* commands;  // the subcommands that take it, space separated
};
constexpr const char* kLakeCommands = "ingest check maintain serve";
constexpr Shortcut kShortcuts[] = {
    // The lake: every command that opens it.
    {"--format", "lake.format", "", kLakeCommands},
    {"--catalog-sqlite", "catalog.sqlite_path", "", kLakeCommands},
    {"--data-path", "storage.data_path", "", "ingest check maintain"},
    // Kafka and the datasets.
    {"--bootstrap-servers", "kafka.bootstrap_servers", "", "ingest check"},
    {"--topic", "topic", "", "ingest check"},
    {"--table", "table", "", "ingest check"},
    {"--flush-interval", "flush.interval", "", "ingest check"},
    {"--http-port", "http.port", "", "ingest check"},
    {"--http-port", "maintain.http_port", "", "maintain"},
    // weir serve.
    {"--host", "serve.host", "", "serve"},
    {"--port", "serve.port", "", "serve"},
    {"--tls-dir", "serve.tls_dir", "", "serve"},
    {"--max-connections", "serve.max_connections", "", "serve"},
    {"--max-connections-per-ip", "serve.max_connections_per_ip", "", "serve"},
    {"--max-failed-logins", "serve.max_failed_logins", "", "serve"},
    {"--ban-seconds", "serve.ban_seconds", "", "serve"},
    {"--statement-timeout-ms", "serve.statement_timeout", "ms", "serve"},
    {"--idle-session-timeout", "serve.idle_session_timeout", "s", "serve"},
    {"--shutdown-timeout", "serve.shutdown_timeout", "s", "serve"},
    {"--session-memory-mb", "serve.session_memory", "MiB", "serve"},
    {"--memory-limit", "serve.memory_limit", "", "serve"},
    {"--threads", "serve.threads", "", "serve"},
    {"--http-port", "serve.http_port", "", "serve"},
};

// True when `commands` (space separated) names `command`.
bool Names(std::string_view commands, std::string_view command) {
  for (size_t start = 0; start < commands.size();) {
    const size_t end = std::min(commands.find(' ', start), commands.size());
    if (commands.substr(start, end - start) == command) return true;
    start = end + 1;
  }
  return false;
}

bool IsDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
}

// The setting's description from the table, and the --set it stands for.
std::string ShortcutHelp(const std::string& setting, const std::string& unit) {
  const config::Setting* found = config::FindSetting(config::Scope::kProcess, setting);
  if (found == nullptr) found = config::FindSetting(config::Scope::kDataset, setting);
  std::string help = found == nullptr ? "" : std::string(found->description) + " ";
  if (unit.empty()) return help + "Same as --set " + setting + "=...";
  return help + "A bare number n means n" + unit + ". Same as --set " + setting + "=<n>" + unit;
}

// The shortcuts `command` takes (kShortcuts, and --catalog-postgres for a command that opens the
// lake), each writing its setting into `shortcuts`.
void AddShortcuts(CLI::App* app, std::string_view command,
                  std::map<std::string, std::string>& shortcuts) {
  for (const Shortcut& shortcut : kShortcuts) {
    if (!Names(shortcut.commands, command)) continue;
    const std::string setting = shortcut.setting, unit = shortcut.unit;
    app->add_option_function<std::string>(
        shortcut.flag,
        [&shortcuts, setting, unit](const std::string& v) {
          shortcuts[setting] = IsDigits(v) ? v + unit : v;
        },
        ShortcutHelp(setting, unit));
  }
  if (!Names(kLakeCommands, command)) return;
  app->add_option_function<std::string>(
      "--catalog-postgres",
      [&shortcuts](const std::string& v) {
        shortcuts["catalog.kind"] = "postgres";
        shortcuts["catalog.postgres_dsn"] = v;
      },
      "PostgreSQL DuckLake catalog, a libpq connection string. Same as --set "
      "catalog.kind=postgres --set catalog.postgres_dsn=...");
}

// What `weir maintain --help` says after its flags.
constexpr const char* kMaintainFooter = R"(
Settings: only the lake's. lake.format, then catalog.* (DuckLake on SQLite or PostgreSQL) or
iceberg.* (an Iceberg SQL or REST catalog), and storage.* where the data needs credentials;
from --config, WEIR_ variables, --set or the flags above (the embedded lakes need none: run
where ingest ran). kafka.* settings and datasets may be given too, as in a file shared with
weir ingest, and are never required.

Tables: with datasets configured, each dataset's table and rejects table (--dataset picks
datasets). Without datasets, every table of the lake, rejects tables included (they hold data;
weir's offset ledger is not a table of the lake). --table picks tables of the lake instead:
schema.table, or a table name found in one schema only; repeatable. A table no dataset
describes is taken with its own layout and the dataset settings given without a dataset
(WEIR_MAINTAIN_EXPIRE_OLDER_THAN=2d, --set maintain.target_file_size=256MiB), else their
defaults. --serve lists the lake's tables again every maintain.stats_interval.

Exit codes: 0 done; 1 the lake or the configuration failed, fsck found problems, or --table
named a table not in the lake (the message lists its tables); 2 a bad command line.
)";

}  // namespace

std::string VersionText() {
  std::ostringstream text;
  text << "weir " << kVersion << " (" << kBuildName << ")\n"
       << "  DuckDB " << duckdb_library_version() << ", Arrow "
       << arrow::GetBuildInfo().version_string << ", librdkafka " << rd_kafka_version_str() << "\n";
  return text.str();
}

namespace {

// Edits (insert, delete, replace) between `a` and `b`.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The closest of `names` to `word` when it is near enough to be a typo ("" otherwise).
std::string Closest(std::string_view word, const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& name : names) {
    const size_t distance = EditDistance(word, name);
    if (distance < best_distance) {
      best = name;
      best_distance = distance;
    }
  }
  return best;
}

// After a parse error: "did you mean" for a mistyped subcommand or flag, and which --help to
// read (the subcommand's own when one was named).
std::string UsageHint(const std::vector<CLI::App*>& commands,
                      const std::vector<std::string>& args) {
  std::vector<std::string> names;
  for (const CLI::App* command : commands) names.push_back(command->get_name());
  const CLI::App* chosen = nullptr;
  if (!args.empty()) {
    for (const CLI::App* command : commands) {
      if (command->get_name() == args[0]) chosen = command;
    }
    if (chosen == nullptr && !args[0].starts_with("-")) {
      const std::string guess = Closest(args[0], names);
      return (guess.empty() ? "" : "Did you mean 'weir " + guess + "'? ") +
             std::string("Run 'weir --help' for the subcommands.\n");
    }
  }
  if (chosen == nullptr) return "Run 'weir --help' for the subcommands.\n";
  std::vector<std::string> flags;
  for (const CLI::Option* option : chosen->get_options()) {
    for (const auto& name : option->get_lnames()) flags.push_back("--" + name);
  }
  std::string hint;
  for (size_t i = 1; i < args.size() && hint.empty(); ++i) {
    const std::string flag = args[i].substr(0, args[i].find('='));
    if (!flag.starts_with("--") || std::find(flags.begin(), flags.end(), flag) != flags.end()) {
      continue;
    }
    const std::string guess = Closest(flag, flags);
    if (!guess.empty()) hint = "Did you mean " + guess + "? ";
  }
  return hint + "Run 'weir " + chosen->get_name() + " --help' for its flags.\n";
}

}  // namespace

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
  MaintainArgs maintain_args;
  WalArgs wal_args;
  std::string config_path;
  std::vector<std::string> sets;
  std::map<std::string, std::string> shortcuts;
  for (const Subcommand& sub : kSubcommands) {
    CLI::App* command = cli.add_subcommand(sub.name, sub.description);
    commands.push_back(command);
    if (std::string_view(sub.name) == "maintain") {
      command
          ->add_option("action", maintain_args.action,
                       "stats (the default), fsck, orphans or expire (these two delete: "
                       "--dry-run, --yes), compact (--dry-run)")
          ->check(CLI::IsMember({"stats", "fsck", "orphans", "expire", "compact"}));
      command->add_option("-c,--config", config_path,
                          "YAML configuration file: the lake's settings (a file shared with weir "
                          "ingest will do)");
      command->add_option("--set", sets,
                          "Override one setting: name=value (see docs/CONFIGURATION.md)");
      AddShortcuts(command, sub.name, shortcuts);
      command->add_option("--table", maintain_args.tables,
                          "Only this table of the lake: schema.table, or a table name found in "
                          "one schema only (repeatable); default: the datasets' tables, or "
                          "without datasets every table of the lake");
      command->add_option("--dataset", maintain_args.datasets,
                          "Only this dataset's tables (repeatable); default: every dataset");
      command->footer(kMaintainFooter);
      command->add_flag("--json", maintain_args.json, "Print the reports as JSON");
      command->add_flag("--dry-run", maintain_args.dry_run,
                        "Say what a destructive action would delete, delete nothing");
      command->add_flag("--yes", maintain_args.yes,
                        "Confirm a destructive action run from a terminal");
      command->add_option("--older-than", maintain_args.older_than,
                          "orphans: only objects last modified longer ago than this (default "
                          "maintain.orphans.older_than, 24h; younger ones may belong to a flush "
                          "not committed yet); expire: only snapshots committed longer ago "
                          "(default maintain.expire.older_than, 5d)");
      command
          ->add_option("--retain-last", maintain_args.retain_last,
                       "expire: always keep this many newest snapshots (default "
                       "maintain.expire.retain_last, 1)")
          ->check(CLI::PositiveNumber);
      command->add_option("--target-size", maintain_args.target_size,
                          "compact: the file size to merge small files into, e.g. 128MiB "
                          "(default: the dataset's maintain.target_file_size, 128MiB)");
      command->add_option("--queue-window", maintain_args.queue_window,
                          "expire, DuckLake: delete the files DuckLake queued for deletion "
                          "longer ago than this (default maintain.expire.queue_window, 24h)");
      command->add_flag("--repair", maintain_args.repair,
                        "fsck: drop the entries of missing or damaged data files in one new "
                        "snapshot (says what first; --dry-run, --yes)");
      command->add_flag("--serve", maintain_args.serve,
                        "Run until SIGTERM: the lake metrics on /metrics (maintain.http_port) "
                        "and the maintain.* policies on their schedule");
    } else if (std::string_view(sub.name) == "wal") {
      command
          ->add_option("action", wal_args.action,
                       "ls (the default): the segment files; check: what recovery would do at "
                       "the next start, changing nothing")
          ->check(CLI::IsMember({"ls", "check"}));
      command->add_option("-c,--config", config_path, "YAML configuration file of the ingest");
      command->add_option("--set", sets,
                          "Override one setting: name=value (see docs/CONFIGURATION.md)");
      command->add_flag("--json", wal_args.json, "Print the report as JSON");
    } else if (std::string_view(sub.name) == "ingest" || std::string_view(sub.name) == "check") {
      command->add_option("-c,--config", config_path, "YAML configuration file");
      command->add_option("--set", sets,
                          "Override one setting: name=value (see docs/CONFIGURATION.md)");
      if (std::string_view(sub.name) == "ingest") {
        command->add_option("--from", ingest_args.from,
                            "Ingest these newline-delimited JSON files (plain, gzip or zstd; - is "
                            "standard input) instead of Kafka, exactly once, then exit");
        command->add_option("--dataset", ingest_args.dataset,
                            "The dataset --from feeds (when several are configured)");
      }
      // Shortcuts for the settings most runs give on the command line.
      AddShortcuts(command, sub.name, shortcuts);
    } else if (std::string_view(sub.name) == "serve") {
      command->add_option("-c,--config", config_path,
                          "YAML configuration file (serve.*, catalog.*, storage.s3_*, log.*)");
      command->add_option("--set", sets,
                          "Override one setting: name=value (see docs/CONFIGURATION.md)");
      AddShortcuts(command, sub.name, shortcuts);
      command->add_flag_callback(
          "--query-log", [&shortcuts] { shortcuts["serve.query_log"] = "true"; },
          "Same as --set serve.query_log=true");
      command->add_flag_callback(
          "--no-query-log", [&shortcuts] { shortcuts["serve.query_log"] = "false"; },
          "Same as --set serve.query_log=false");
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
    err << "weir: " << e.what() << "\n" << UsageHint(commands, args);
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
  if (name == "ingest" || name == "check" || name == "serve" || name == "maintain" ||
      name == "wal") {
    std::map<std::string, std::string> overrides = shortcuts;
    for (const auto& set : sets) {
      if (auto added = config::AddOverride(set, &overrides); !added.ok()) {
        err << "weir " << name << ": --set " << set << ": " << added.message() << "\n";
        return kExitUsage;
      }
    }
    if (name == "wal") {
      if (!config_path.empty()) wal_args.config_path = config_path;
      wal_args.overrides = std::move(overrides);
      return RunWal(wal_args, out, err);
    }
    if (name == "maintain") {
      if (!config_path.empty()) maintain_args.config_path = config_path;
      maintain_args.overrides = std::move(overrides);
      maintain_args.interactive = isatty(STDIN_FILENO) != 0;
      return RunMaintain(maintain_args, out, err);
    }
    if (name == "serve") {
      if (!config_path.empty()) serve_args.config_path = config_path;
      serve_args.overrides = std::move(overrides);
      return RunServe(serve_args, out, err);
    }
    if (!config_path.empty()) ingest_args.config_path = config_path;
    ingest_args.overrides = std::move(overrides);
    return name == "ingest" ? RunIngest(ingest_args, out, err) : RunCheck(ingest_args, out, err);
  }
  err << "weir " << name << ": not implemented yet in weir " << kVersion << "\n";
  return kExitNotImplemented;
}

}  // namespace weir::app
