#include "serve/session/commands.h"

#include <pg_query.h>
#include <pg_query/pg_query.pb-c.h>

#include <cctype>
#include <charconv>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "base/sql_quote.h"
#include "base/text.h"
#include "serve/compat/settings.h"

namespace weir::serve {
namespace {

// PostgreSQL's cursor option bits (parsenodes.h).
constexpr int32_t kCursorBinary = 0x0001;
constexpr int32_t kCursorScroll = 0x0002;
constexpr int32_t kCursorHold = 0x0020;

Status SyntaxError(const std::string& message) {
  return ClassifiedError(ErrorClass::kBadData, "sqlstate", "42601", message);
}

}  // namespace

std::string FirstKeyword(const std::string& sql) {
  size_t i = 0;
  while (i < sql.size()) {
    if (std::isspace(static_cast<unsigned char>(sql[i]))) {
      ++i;
    } else if (sql.compare(i, 2, "--") == 0) {
      i = sql.find('\n', i);
      if (i == std::string::npos) return "";
    } else if (sql.compare(i, 2, "/*") == 0) {
      i = sql.find("*/", i);
      if (i == std::string::npos) return "";
      i += 2;
    } else {
      break;
    }
  }
  std::string word;
  while (i < sql.size() && std::isalpha(static_cast<unsigned char>(sql[i]))) {
    word += static_cast<char>(std::toupper(static_cast<unsigned char>(sql[i++])));
  }
  return word;
}

namespace {

struct ParseDeleter {
  void operator()(PgQuery__ParseResult* result) const {
    pg_query__parse_result__free_unpacked(result, nullptr);
  }
};
struct ScanDeleter {
  void operator()(PgQuery__ScanResult* result) const {
    pg_query__scan_result__free_unpacked(result, nullptr);
  }
};

std::unique_ptr<PgQuery__ScanResult, ScanDeleter> Scan(const std::string& sql) {
  PgQueryScanResult scan = pg_query_scan(sql.c_str());
  PgQuery__ScanResult* tokens =
      scan.error != nullptr
          ? nullptr
          : pg_query__scan_result__unpack(nullptr, scan.pbuf.len,
                                          reinterpret_cast<const uint8_t*>(scan.pbuf.data));
  pg_query_free_scan_result(scan);
  return std::unique_ptr<PgQuery__ScanResult, ScanDeleter>(tokens);
}

// The text inside the first top-level parentheses (COPY (query) TO ...).
std::string ParenthesizedText(const std::string& sql) {
  auto tokens = Scan(sql);
  if (!tokens) return "";
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i < tokens->n_tokens; ++i) {
    const auto* token = tokens->tokens[i];
    if (token->token == PG_QUERY__TOKEN__ASCII_40) {
      if (depth++ == 0) begin = static_cast<size_t>(token->end);
    } else if (token->token == PG_QUERY__TOKEN__ASCII_41 && --depth == 0) {
      return sql.substr(begin, static_cast<size_t>(token->start) - begin);
    }
  }
  return "";
}

// The query of DECLARE ... CURSOR ... FOR <query>.
std::string CursorQueryText(const std::string& sql) {
  auto tokens = Scan(sql);
  if (!tokens) return "";
  bool after_cursor = false;
  for (size_t i = 0; i < tokens->n_tokens; ++i) {
    const auto* token = tokens->tokens[i];
    if (token->token == PG_QUERY__TOKEN__CURSOR) after_cursor = true;
    if (after_cursor && token->token == PG_QUERY__TOKEN__FOR) {
      return std::string(TrimSpace(sql.substr(static_cast<size_t>(token->end))));
    }
  }
  return "";
}

// The text of a DefElem's or A_Const's argument ("" when absent).
std::string ArgText(const PgQuery__Node* node) {
  if (node == nullptr) return "";
  switch (node->node_case) {
    case PG_QUERY__NODE__NODE_STRING:
      return node->string->sval;
    case PG_QUERY__NODE__NODE_INTEGER:
      return std::to_string(node->integer->ival);
    case PG_QUERY__NODE__NODE_FLOAT:
      return node->float_->fval;
    case PG_QUERY__NODE__NODE_BOOLEAN:
      return node->boolean->boolval ? "true" : "false";
    case PG_QUERY__NODE__NODE_A_CONST: {
      const auto* c = node->a_const;
      if (c->isnull) return "";
      switch (c->val_case) {
        case PG_QUERY__A__CONST__VAL_SVAL:
          return c->sval->sval;
        case PG_QUERY__A__CONST__VAL_IVAL:
          return std::to_string(c->ival->ival);
        case PG_QUERY__A__CONST__VAL_FVAL:
          return c->fval->fval;
        case PG_QUERY__A__CONST__VAL_BOOLVAL:
          return c->boolval->boolval ? "true" : "false";
        default:
          return "";
      }
    }
    default:
      return "";
  }
}

Result<bool> BoolOption(const std::string& name, const PgQuery__Node* arg) {
  if (arg == nullptr) return true;
  const std::string text = ToLower(ArgText(arg));
  if (text == "true" || text == "on" || text == "1") return true;
  if (text == "false" || text == "off" || text == "0") return false;
  return SyntaxError(fmt::format("{} requires a Boolean value", name));
}

Result<char> CharOption(const std::string& name, const PgQuery__Node* arg) {
  const std::string text = ArgText(arg);
  if (text.size() != 1) {
    return SyntaxError(fmt::format("COPY {} must be a single one-byte character", name));
  }
  return text[0];
}

Result<Command> RecognizeCopy(const std::string& sql, const PgQuery__CopyStmt& copy) {
  if (copy.is_program || (copy.filename != nullptr && *copy.filename != '\0')) {
    return Command();  // files and programs: DuckDB's sandbox refuses them
  }
  CopyCommand command;
  command.from_stdin = copy.is_from;
  if (copy.where_clause != nullptr) return Unsupported("COPY FROM ... WHERE is not supported");
  if (copy.relation != nullptr) {
    const auto* relation = copy.relation;
    std::string schema = relation->schemaname != nullptr ? relation->schemaname : "";
    if (schema == "public") schema = "main";
    if (relation->catalogname != nullptr && *relation->catalogname != '\0') {
      command.table = QuoteIdentifier(relation->catalogname) + ".";
    }
    if (!schema.empty()) command.table += QuoteIdentifier(schema) + ".";
    command.table += QuoteIdentifier(relation->relname);
    for (size_t i = 0; i < copy.n_attlist; ++i) {
      command.columns.push_back(QuoteIdentifier(ArgText(copy.attlist[i])));
    }
    std::string list;
    for (const auto& column : command.columns) list += (list.empty() ? "" : ", ") + column;
    command.query = "SELECT " + (list.empty() ? std::string("*") : list) + " FROM " + command.table;
  } else {
    command.query = ParenthesizedText(sql);
    if (command.query.empty()) return SyntaxError("COPY: cannot find the query in parentheses");
  }
  CopyOptions& options = command.options;
  bool delimiter_set = false, null_set = false, escape_set = false;
  for (size_t i = 0; i < copy.n_options; ++i) {
    const PgQuery__Node* node = copy.options[i];
    if (node->node_case != PG_QUERY__NODE__NODE_DEF_ELEM) continue;
    const std::string name = ToLower(node->def_elem->defname);
    const PgQuery__Node* arg = node->def_elem->arg;
    if (name == "format") {
      const std::string format = ToLower(ArgText(arg));
      if (format == "text") {
        options.format = CopyFormat::kText;
      } else if (format == "csv") {
        options.format = CopyFormat::kCsv;
      } else if (format == "binary") {
        options.format = CopyFormat::kBinary;
      } else {
        return SyntaxError(fmt::format("COPY format \"{}\" not recognized", format));
      }
    } else if (name == "header") {
      WEIR_ASSIGN_OR_RAISE(options.header, BoolOption("header", arg));
    } else if (name == "delimiter") {
      WEIR_ASSIGN_OR_RAISE(options.delimiter, CharOption("delimiter", arg));
      delimiter_set = true;
    } else if (name == "null") {
      options.null_string = ArgText(arg);
      null_set = true;
    } else if (name == "quote") {
      WEIR_ASSIGN_OR_RAISE(options.quote, CharOption("quote", arg));
    } else if (name == "escape") {
      WEIR_ASSIGN_OR_RAISE(options.escape, CharOption("escape", arg));
      escape_set = true;
    } else if (name == "encoding") {
      const std::string encoding = ToLower(ArgText(arg));
      if (encoding != "utf8" && encoding != "utf-8") {
        return Unsupported("COPY encoding must be UTF8, not " + ArgText(arg));
      }
    } else if (name == "freeze") {
      continue;  // nothing to freeze in a lake
    } else {
      return Unsupported(fmt::format("COPY option \"{}\" is not supported", name));
    }
  }
  if (options.format == CopyFormat::kCsv) {
    if (!delimiter_set) options.delimiter = ',';
    if (!null_set) options.null_string = "";
    if (!escape_set) options.escape = options.quote;
  }
  if (options.format == CopyFormat::kBinary && options.header) {
    return SyntaxError("cannot specify HEADER in BINARY mode");
  }
  return Command(std::move(command));
}

}  // namespace

bool IsServerSetting(const std::string& name) {
  return name == "statement_timeout" || name == "idle_session_timeout";
}

bool IsSessionSetting(const std::string& name) { return compat::FindPgSetting(name) != nullptr; }

Result<int64_t> ParseDurationMillis(const std::string& name, const std::string& value) {
  const std::string text(TrimSpace(ToLower(value)));
  int64_t number = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, number);
  const std::string unit(TrimSpace(std::string(ptr, end)));
  static const std::pair<const char*, int64_t> kUnits[] = {
      {"", 1}, {"ms", 1}, {"s", 1000}, {"min", 60000}, {"h", 3600000}, {"d", 86400000}};
  if (ec == std::errc() && number >= 0) {
    for (const auto& [suffix, scale] : kUnits) {
      if (unit == suffix) return number * scale;
    }
  }
  return ClassifiedError(ErrorClass::kBadData, "sqlstate", "22023",
                         fmt::format("invalid value for parameter \"{}\": \"{}\" (a duration such "
                                     "as 5000, 250ms, 5s or 1min; 0 disables)",
                                     name, value));
}

Status Unsupported(std::string message) {
  return ClassifiedError(ErrorClass::kBadData, "sqlstate", "0A000", std::move(message));
}

Result<Command> RecognizeCommand(const std::string& statement) {
  const std::string word = FirstKeyword(statement);
  static const char* kOurs[] = {"COPY",  "DECLARE",    "FETCH", "MOVE",    "CLOSE",     "SET",
                                "RESET", "DEALLOCATE", "SHOW",  "DISCARD", "SAVEPOINT", "RELEASE"};
  bool ours = false;
  for (const char* w : kOurs) ours = ours || word == w;
  if (!ours) return Command();
  PgQueryProtobufParseResult parsed = pg_query_parse_protobuf(statement.c_str());
  std::unique_ptr<PgQuery__ParseResult, ParseDeleter> tree(
      parsed.error != nullptr ? nullptr
                              : pg_query__parse_result__unpack(
                                    nullptr, parsed.parse_tree.len,
                                    reinterpret_cast<const uint8_t*>(parsed.parse_tree.data)));
  pg_query_free_protobuf_parse_result(parsed);
  // What PostgreSQL cannot parse is DuckDB's (e.g. COPY t TO 'f' (FORMAT parquet)).
  if (!tree || tree->n_stmts != 1 || tree->stmts[0]->stmt == nullptr) return Command();
  const PgQuery__Node* node = tree->stmts[0]->stmt;
  switch (node->node_case) {
    case PG_QUERY__NODE__NODE_COPY_STMT:
      return RecognizeCopy(statement, *node->copy_stmt);
    case PG_QUERY__NODE__NODE_DECLARE_CURSOR_STMT: {
      const auto& declare = *node->declare_cursor_stmt;
      DeclareCommand command;
      command.name = declare.portalname;
      command.hold = (declare.options & kCursorHold) != 0;
      command.binary = (declare.options & kCursorBinary) != 0;
      command.scroll = (declare.options & kCursorScroll) != 0;
      command.query = CursorQueryText(statement);
      if (command.query.empty()) return SyntaxError("DECLARE: cannot find the cursor's query");
      return Command(std::move(command));
    }
    case PG_QUERY__NODE__NODE_FETCH_STMT: {
      const auto& fetch = *node->fetch_stmt;
      FetchCommand command;
      command.name = fetch.portalname;
      command.move = fetch.ismove;
      // PostgreSQL's parser turns ALL into LONG_MAX.
      command.count = fetch.how_many;
      command.forward =
          fetch.direction == PG_QUERY__FETCH_DIRECTION__FETCH_FORWARD ||
          (fetch.direction == PG_QUERY__FETCH_DIRECTION__FETCH_RELATIVE && fetch.how_many >= 0);
      if (fetch.direction == PG_QUERY__FETCH_DIRECTION__FETCH_RELATIVE && command.forward) {
        command.count = fetch.how_many;
      }
      return Command(std::move(command));
    }
    case PG_QUERY__NODE__NODE_CLOSE_PORTAL_STMT: {
      CloseCommand command;
      const char* name = node->close_portal_stmt->portalname;
      command.all = name == nullptr || *name == '\0';
      if (!command.all) command.name = name;
      return Command(std::move(command));
    }
    case PG_QUERY__NODE__NODE_DEALLOCATE_STMT: {
      DeallocateCommand command;
      const char* name = node->deallocate_stmt->name;
      command.all = name == nullptr || *name == '\0';
      if (!command.all) command.name = name;
      return Command(std::move(command));
    }
    case PG_QUERY__NODE__NODE_VARIABLE_SET_STMT: {
      const auto& set = *node->variable_set_stmt;
      const std::string name = set.name != nullptr ? ToLower(set.name) : "";
      SettingCommand command;
      command.name = name;
      command.local = set.is_local;
      switch (set.kind) {
        case PG_QUERY__VARIABLE_SET_KIND__VAR_RESET_ALL:
          command.kind = SettingCommand::Kind::kResetAll;
          command.reset_tag = true;
          return Command(std::move(command));
        case PG_QUERY__VARIABLE_SET_KIND__VAR_SET_DEFAULT:
        case PG_QUERY__VARIABLE_SET_KIND__VAR_RESET:
          command.kind = SettingCommand::Kind::kReset;
          command.reset_tag = set.kind == PG_QUERY__VARIABLE_SET_KIND__VAR_RESET;
          break;
        case PG_QUERY__VARIABLE_SET_KIND__VAR_SET_VALUE:
          command.kind = SettingCommand::Kind::kSet;
          for (size_t i = 0; i < set.n_args; ++i) {
            const PgQuery__Node* arg = set.args[i];
            const bool constant = arg->node_case == PG_QUERY__NODE__NODE_A_CONST;
            if (!constant) {
              return Unsupported(fmt::format(
                  "SET {} takes constants only here (a zone name for TIME ZONE)", name));
            }
            command.values.push_back(ArgText(arg));
            command.quoted.push_back(arg->a_const->val_case == PG_QUERY__A__CONST__VAL_SVAL);
            command.value += (command.value.empty() ? "" : ", ") + command.values.back();
          }
          break;
        case PG_QUERY__VARIABLE_SET_KIND__VAR_SET_MULTI: {
          // SET TRANSACTION ... lasts until the end of the block, SET SESSION
          // CHARACTERISTICS AS TRANSACTION ... sets the defaults.
          const bool session = name == "session characteristics";
          if (!session && name != "transaction") return Command();
          command.kind = SettingCommand::Kind::kSet;
          command.local = !session;
          for (size_t i = 0; i < set.n_args; ++i) {
            const PgQuery__Node* arg = set.args[i];
            if (arg->node_case != PG_QUERY__NODE__NODE_DEF_ELEM) continue;
            const PgQuery__DefElem* option = arg->def_elem;
            command.assignments.emplace_back(
                std::string(session ? "default_" : "") + option->defname, ArgText(option->arg));
          }
          if (command.assignments.empty()) return Command();
          command.name = command.assignments.front().first;
          return Command(std::move(command));
        }
        default:
          return Command();  // SET ... FROM CURRENT
      }
      if (!IsServerSetting(name) && !IsSessionSetting(name)) return Command();
      return Command(std::move(command));
    }
    case PG_QUERY__NODE__NODE_TRANSACTION_STMT: {
      const auto& transaction = *node->transaction_stmt;
      const bool release = transaction.kind == PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_RELEASE;
      if (!release && transaction.kind != PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_SAVEPOINT) {
        return Command();
      }
      return Command(SavepointCommand{
          release, transaction.savepoint_name != nullptr ? transaction.savepoint_name : ""});
    }
    case PG_QUERY__NODE__NODE_DISCARD_STMT: {
      DiscardCommand command;
      switch (node->discard_stmt->target) {
        case PG_QUERY__DISCARD_MODE__DISCARD_PLANS:
          command.target = DiscardCommand::Target::kPlans;
          break;
        case PG_QUERY__DISCARD_MODE__DISCARD_SEQUENCES:
          command.target = DiscardCommand::Target::kSequences;
          break;
        case PG_QUERY__DISCARD_MODE__DISCARD_TEMP:
          command.target = DiscardCommand::Target::kTemp;
          break;
        default:
          command.target = DiscardCommand::Target::kAll;
          break;
      }
      return Command(command);
    }
    case PG_QUERY__NODE__NODE_VARIABLE_SHOW_STMT: {
      const std::string name = ToLower(node->variable_show_stmt->name);
      if (!IsServerSetting(name)) return Command();
      SettingCommand command;
      command.kind = SettingCommand::Kind::kShow;
      command.name = name;
      return Command(std::move(command));
    }
    default:
      return Command();
  }
}

}  // namespace weir::serve
