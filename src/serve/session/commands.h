// The statements `weir serve` answers itself instead of passing them to DuckDB: COPY with
// STDIN/STDOUT, cursors (DECLARE / FETCH / MOVE / CLOSE), DEALLOCATE of protocol-level prepared
// statements, SET / RESET / RESET ALL of PostgreSQL's settings (SessionSettings), SHOW of the
// ones the server enforces (statement_timeout), DISCARD. Recognised with PostgreSQL's own
// parser (libpg_query).
//
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/status.h"

namespace weir::serve {

enum class CopyFormat { kText, kCsv, kBinary };

struct CopyOptions {
  CopyFormat format = CopyFormat::kText;
  char delimiter = '\t';            // ',' for CSV
  std::string null_string = "\\N";  // "" for CSV
  bool header = false;
  char quote = '"';
  char escape = '"';
};

// COPY table [(columns)] FROM STDIN / COPY {table [(columns)] | (query)} TO STDOUT.
struct CopyCommand {
  bool from_stdin = false;
  std::string table;                 // quoted ("main"."events"); empty for a query
  std::vector<std::string> columns;  // quoted identifiers
  std::string query;                 // what TO STDOUT runs
  CopyOptions options;
};

// DECLARE name [BINARY] [NO SCROLL] CURSOR [WITH | WITHOUT HOLD] FOR query.
struct DeclareCommand {
  std::string name;
  std::string query;
  bool hold = false;
  bool binary = false;
  bool scroll = false;
};

// FETCH / MOVE [FORWARD | NEXT | count | ALL] [FROM | IN] name. Only forward fetches exist.
struct FetchCommand {
  std::string name;
  bool move = false;
  bool forward = true;  // false: BACKWARD, ABSOLUTE or RELATIVE < 0 (refused)
  int64_t count = 1;    // INT64_MAX for ALL
};

struct CloseCommand {
  std::string name;  // empty with all = true for CLOSE ALL
  bool all = false;
};

// DEALLOCATE [PREPARE] name | ALL: closes named statements of the extended protocol.
struct DeallocateCommand {
  std::string name;  // empty with all = true
  bool all = false;
};

// SET / RESET / RESET ALL of a PostgreSQL setting (see SessionSettings), SHOW of a setting the
// server itself enforces (statement_timeout; SHOW of the others is DuckDB's, over the session's
// variables).
struct SettingCommand {
  enum class Kind { kSet, kReset, kResetAll, kShow } kind = Kind::kSet;
  std::string name;                 // lower case
  std::vector<std::string> values;  // for kSet, as PostgreSQL flattens them
  std::vector<bool> quoted;         // values[i] was a string constant
  std::string value;                // values joined (what the server settings take)
  bool local = false;
  bool reset_tag = false;  // written RESET (SET ... TO DEFAULT completes as SET)
  // SET TRANSACTION ... (local) / SET SESSION CHARACTERISTICS AS TRANSACTION ...: the
  // settings it assigns (transaction_isolation, default_transaction_read_only, ...).
  std::vector<std::pair<std::string, std::string>> assignments;
};

// SAVEPOINT name / RELEASE [SAVEPOINT] name: accepted inside a transaction block (DuckDB has no
// savepoints; ROLLBACK TO is refused, see compat).
struct SavepointCommand {
  bool release = false;
  std::string name;
};

// DISCARD ALL | PLANS | SEQUENCES | TEMP.
struct DiscardCommand {
  enum class Target { kAll, kPlans, kSequences, kTemp } target = Target::kAll;
};

using Command =
    std::variant<std::monostate, CopyCommand, DeclareCommand, FetchCommand, CloseCommand,
                 DeallocateCommand, SettingCommand, DiscardCommand, SavepointCommand>;

// A feature PostgreSQL has and weir serve does not: SQLSTATE 0A000 (feature_not_supported).
Status Unsupported(std::string message);

// The command a statement is, or monostate when DuckDB runs it (including COPY to or from a
// file, which the sandbox refuses). Malformed commands are 42601.
Result<Command> RecognizeCommand(const std::string& statement);

// The upper-cased first keyword of a statement, after spaces and comments ("" when none).
std::string FirstKeyword(const std::string& statement);

// The settings whose SHOW the server answers itself (SET and RESET it answers for every
// PostgreSQL setting, IsSessionSetting).
bool IsServerSetting(const std::string& name);
bool IsSessionSetting(const std::string& name);

// A setting value in milliseconds ("5s", "250ms", "1min", "5000", "0"); 22023 when invalid.
Result<int64_t> ParseDurationMillis(const std::string& name, const std::string& value);

}  // namespace weir::serve
