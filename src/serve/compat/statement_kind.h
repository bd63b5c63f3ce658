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

}  // namespace weir::serve::compat
