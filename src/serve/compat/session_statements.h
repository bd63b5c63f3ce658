// PostgreSQL's session statements as DuckDB runs them: SET / RESET / SHOW of PostgreSQL's
// settings (see settings.h), SET [SESSION CHARACTERISTICS AS] TRANSACTION, BEGIN with
// isolation levels (DuckDB's transactions are snapshot isolated whatever is asked), savepoints.
#pragma once

#include <pg_query/pg_query.pb-c.h>

#include <optional>
#include <string>

namespace weir::serve::compat {

// The DuckDB statement for `stmt` (a VariableSetStmt, VariableShowStmt or TransactionStmt);
// nullopt when it is left as written (DuckDB's own settings, plain BEGIN, COMMIT, ...).
std::optional<std::string> RewriteSessionStatement(const PgQuery__Node* stmt);

}  // namespace weir::serve::compat
