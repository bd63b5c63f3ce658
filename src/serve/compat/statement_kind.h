// What a statement is, as PostgreSQL's parser sees it: whether it controls the transaction
// block, and the command tag PostgreSQL reports for DDL. Serve classifies statements only
// through this (or DuckDB's statement type), never by the first words of their text, so
// comments, case and spacing cannot change the answer.
//
// Threading: pure functions, callable from any session thread.
#pragma once

#include <string>

namespace weir::serve::compat {

enum class TransactionControl {
  kNone,      // anything else, savepoints included, and text PostgreSQL cannot parse
  kBegin,     // BEGIN, START TRANSACTION (with any modes)
  kCommit,    // COMMIT, END
  kRollback,  // ROLLBACK, ABORT
};

// What `statement` (one statement) does to the transaction block.
TransactionControl TransactionControlOf(const std::string& statement);

// PostgreSQL's command tag (without a row count) of a DDL statement: "CREATE TABLE",
// "DROP VIEW", "ALTER TABLE", "COMMENT", "CHECKPOINT", ...; `verb` alone when the parse tree
// names no object kind we report, or PostgreSQL cannot parse the statement (DuckDB syntax:
// CREATE MACRO).
std::string CommandTagOf(const std::string& statement, const std::string& verb);

// For read-only sessions: a function `statement` calls (or CHECKPOINT) that does file work on
// the lake before DuckDB refuses its catalog write — DuckLake's maintenance functions write new
// Parquet files or delete scheduled ones first (see docs/ARCHITECTURE.md, the read role) — or
// that runs SQL handed to it as a string the check cannot see into (`query`,
// `json_execute_serialized_sql`), or that hands out a catalog's vended storage credentials
// (`iceberg_load_table_response`). Every `ducklake_*` function but the read-only ones counts.
// Found in PostgreSQL's lexer tokens (so DuckDB syntax such as FROM-first is covered too):
// a name in call position `name(`, qualified or not, quoted or not, in any case (DuckDB
// resolves function names case-insensitively); comments and string literals never match.
// Empty when there is none; text the lexer cannot scan is reported as "(unscannable text)".
std::string LakeWritingCallOf(const std::string& statement);

}  // namespace weir::serve::compat
