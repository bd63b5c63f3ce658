#include "serve/compat/statement_kind.h"

#include <pg_query.h>
#include <pg_query/pg_query.pb-c.h>

#include <algorithm>
#include <iterator>
#include <memory>
#include <string_view>

#include "base/text.h"
#include "serve/compat/tokens.h"

namespace weir::serve::compat {
namespace {

struct TreeDeleter {
  void operator()(PgQuery__ParseResult* tree) const {
    pg_query__parse_result__free_unpacked(tree, nullptr);
  }
};
using ParseTree = std::unique_ptr<PgQuery__ParseResult, TreeDeleter>;

// The parse tree of `sql`, or null when PostgreSQL cannot parse it.
ParseTree Parse(const std::string& sql) {
  PgQueryProtobufParseResult parsed = pg_query_parse_protobuf(sql.c_str());
  ParseTree tree;
  if (parsed.error == nullptr) {
    tree.reset(pg_query__parse_result__unpack(
        nullptr, parsed.parse_tree.len, reinterpret_cast<const uint8_t*>(parsed.parse_tree.data)));
  }
  pg_query_free_protobuf_parse_result(parsed);
  return tree;
}

// The one statement of `tree`, or null.
const PgQuery__Node* OnlyStatement(const ParseTree& tree) {
  if (!tree || tree->n_stmts != 1) return nullptr;
  return tree->stmts[0]->stmt;
}

// Every transaction statement contains one of these words (lower case); text without any is
// not parsed at all. This only saves the parse: the parse tree decides.
constexpr std::string_view kTransactionWords[] = {"begin", "start",    "commit",
                                                  "end",   "rollback", "abort"};

const char* ObjectWord(PgQuery__ObjectType type) {
  switch (type) {
    case PG_QUERY__OBJECT_TYPE__OBJECT_TABLE:
      return "TABLE";
    case PG_QUERY__OBJECT_TYPE__OBJECT_VIEW:
      return "VIEW";
    case PG_QUERY__OBJECT_TYPE__OBJECT_MATVIEW:
      return "MATERIALIZED VIEW";
    case PG_QUERY__OBJECT_TYPE__OBJECT_SCHEMA:
      return "SCHEMA";
    case PG_QUERY__OBJECT_TYPE__OBJECT_INDEX:
      return "INDEX";
    case PG_QUERY__OBJECT_TYPE__OBJECT_SEQUENCE:
      return "SEQUENCE";
    case PG_QUERY__OBJECT_TYPE__OBJECT_FUNCTION:
      return "FUNCTION";
    case PG_QUERY__OBJECT_TYPE__OBJECT_TYPE:
      return "TYPE";
    default:
      return nullptr;
  }
}

std::string Tag(const std::string& verb, const char* object) {
  return object == nullptr ? verb : verb + " " + object;
}

}  // namespace

TransactionControl TransactionControlOf(const std::string& statement) {
  const std::string lower = ToLower(statement);
  if (std::none_of(std::begin(kTransactionWords), std::end(kTransactionWords),
                   [&](std::string_view word) { return lower.find(word) != std::string::npos; })) {
    return TransactionControl::kNone;
  }
  const ParseTree tree = Parse(statement);
  const PgQuery__Node* stmt = OnlyStatement(tree);
  if (stmt == nullptr || stmt->node_case != PG_QUERY__NODE__NODE_TRANSACTION_STMT) {
    return TransactionControl::kNone;
  }
  switch (stmt->transaction_stmt->kind) {
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_BEGIN:
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_START:
      return TransactionControl::kBegin;
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_COMMIT:
      return TransactionControl::kCommit;
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_ROLLBACK:
      return TransactionControl::kRollback;
    default:
      return TransactionControl::kNone;
  }
}

std::string CommandTagOf(const std::string& statement, const std::string& verb) {
  const ParseTree tree = Parse(statement);
  const PgQuery__Node* stmt = OnlyStatement(tree);
  if (stmt == nullptr) return verb;
  switch (stmt->node_case) {
    case PG_QUERY__NODE__NODE_CREATE_STMT:
      return "CREATE TABLE";
    case PG_QUERY__NODE__NODE_CREATE_TABLE_AS_STMT:
      return Tag("CREATE", ObjectWord(stmt->create_table_as_stmt->objtype));
    case PG_QUERY__NODE__NODE_VIEW_STMT:
      return "CREATE VIEW";
    case PG_QUERY__NODE__NODE_CREATE_SCHEMA_STMT:
      return "CREATE SCHEMA";
    case PG_QUERY__NODE__NODE_INDEX_STMT:
      return "CREATE INDEX";
    case PG_QUERY__NODE__NODE_CREATE_SEQ_STMT:
      return "CREATE SEQUENCE";
    case PG_QUERY__NODE__NODE_CREATE_FUNCTION_STMT:
      return "CREATE FUNCTION";
    case PG_QUERY__NODE__NODE_CREATE_ENUM_STMT:
    case PG_QUERY__NODE__NODE_COMPOSITE_TYPE_STMT:
      return "CREATE TYPE";
    case PG_QUERY__NODE__NODE_DROP_STMT:
      return Tag("DROP", ObjectWord(stmt->drop_stmt->remove_type));
    case PG_QUERY__NODE__NODE_ALTER_TABLE_STMT:
      return Tag("ALTER", ObjectWord(stmt->alter_table_stmt->objtype));
    case PG_QUERY__NODE__NODE_ALTER_SEQ_STMT:
      return "ALTER SEQUENCE";
    case PG_QUERY__NODE__NODE_RENAME_STMT: {
      const PgQuery__RenameStmt* rename = stmt->rename_stmt;
      // Renaming a column is an ALTER of the relation holding it.
      const PgQuery__ObjectType object = rename->rename_type == PG_QUERY__OBJECT_TYPE__OBJECT_COLUMN
                                             ? rename->relation_type
                                             : rename->rename_type;
      return Tag("ALTER", ObjectWord(object));
    }
    case PG_QUERY__NODE__NODE_COMMENT_STMT:
      return "COMMENT";
    case PG_QUERY__NODE__NODE_CHECK_POINT_STMT:
      return "CHECKPOINT";
    default:
      return verb;
  }
}

namespace {

// DuckLake's functions that only read (DuckLake d8a1881e); every other ducklake_* writes.
constexpr std::string_view kReadOnlyDuckLakeFunctions[] = {"ducklake_current_snapshot",
                                                           "ducklake_last_committed_snapshot",
                                                           "ducklake_list_files",
                                                           "ducklake_options",
                                                           "ducklake_scan",
                                                           "ducklake_settings",
                                                           "ducklake_snapshots",
                                                           "ducklake_table_changes",
                                                           "ducklake_table_deletions",
                                                           "ducklake_table_info",
                                                           "ducklake_table_insertions"};
// Functions that write without the ducklake_ prefix, or run SQL given as text; and DuckDB's
// iceberg_load_table_response, whose answer carries the storage credentials an Iceberg REST
// catalog vends with a table (a read user could write the lake's storage with them).
constexpr std::string_view kRefusedFunctions[] = {"checkpoint", "force_checkpoint", "query",
                                                  "json_execute_serialized_sql",
                                                  "iceberg_load_table_response"};

// An identifier token's name as DuckDB resolves it: quotes removed, lower case.
std::string NameOf(std::string_view token) {
  if (token.size() >= 2 && token.front() == '"' && token.back() == '"') {
    std::string name;
    for (size_t i = 1; i + 1 < token.size(); ++i) {
      name += token[i];
      if (token[i] == '"') ++i;  // a doubled quote
    }
    return ToLower(name);
  }
  return ToLower(token);
}

bool Writes(const std::string& name) {
  if (std::find(std::begin(kRefusedFunctions), std::end(kRefusedFunctions), name) !=
      std::end(kRefusedFunctions)) {
    return true;
  }
  return name.starts_with("ducklake_") &&
         std::find(std::begin(kReadOnlyDuckLakeFunctions), std::end(kReadOnlyDuckLakeFunctions),
                   name) == std::end(kReadOnlyDuckLakeFunctions);
}

}  // namespace

std::string LakeWritingCallOf(const std::string& statement) {
  const auto tokens = Tokens::Scan(statement);
  if (!tokens) return "(unscannable text)";
  for (size_t i = 0; i < tokens->size(); ++i) {
    const Token& token = (*tokens)[i];
    // CHECKPOINT [db]: DuckLake flushes inlined data into new files before its refused commit.
    if (token.kind == PG_QUERY__TOKEN__CHECKPOINT) return "CHECKPOINT";
    // A Unicode-escaped identifier (U&"..."): not decoded here, so not trusted.
    if (token.kind == PG_QUERY__TOKEN__UIDENT) return "(a U& identifier)";
    size_t next = i + 1;  // the next token that is not a comment
    while (next < tokens->size() && ((*tokens)[next].kind == PG_QUERY__TOKEN__SQL_COMMENT ||
                                     (*tokens)[next].kind == PG_QUERY__TOKEN__C_COMMENT)) {
      ++next;
    }
    const bool called = next < tokens->size() && (*tokens)[next].kind == PG_QUERY__TOKEN__ASCII_40;
    if (!called || !tokens->IsNamePart(i)) continue;
    const std::string name = NameOf(tokens->Text(i));
    if (Writes(name)) return name;
  }
  return "";
}

}  // namespace weir::serve::compat
