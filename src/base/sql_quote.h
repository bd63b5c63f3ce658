// Quoting for SQL text built by weir (DuckDB's and PostgreSQL's dialects quote alike): the one
// implementation of both, used by lake (DuckLake DDL, ATTACH, secrets), serve's engine, session
// and compatibility catalog.
//
// Threading: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace weir {

// `text` as a SQL string literal: '...' with every ' doubled.
std::string QuoteLiteral(std::string_view text);

// `name` as a SQL identifier: "..." with every " doubled (always quoted, so case and keywords
// are kept as they are).
std::string QuoteIdentifier(std::string_view name);

}  // namespace weir
