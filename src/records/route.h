// Routing (issue 14; the Kafka Connect sink's route field): a dataset's rows go to the table a
// template names from one field of the row, `events_{event}` → `events_click`. This file is the
// pure part: the template's grammar and the split of a flush's rows by table name. Which
// tables may be created (the cap) and how they commit is ingest's (ingest/routed_writer.h).
//
// A row's table is a function of the row and the configuration only (never of what came
// before it): a replay after a crash sends every record where it went the first time, which is
// what keeps routing exactly once (docs/ARCHITECTURE.md, "Routing and the ledger").
//
// The value: a string as is, an integer (or an integral double of magnitude at most 2^53, the
// form an integer takes in a flush that also holds fractions) in decimal. The rendered name is
// folded to lower case (the destinations resolve names case-insensitively, so `Click` and
// `click` are one table) and must be an identifier of at most 63 bytes. A row goes to the
// dataset's own table (the fallback) instead, counted by reason, when:
//  - field_missing: the field is absent from the row or null;
//  - not_a_name: the value is neither a string nor an integer, is empty, or renders an invalid
//    name;
//  - not_allowed: an allowlist is configured and does not hold the name;
//  - reserved_name: the name is a table weir writes otherwise (the dataset's rejects table, a
//    table of another dataset).
// A name equal to the fallback table's own goes there without being counted.
//
// Threading: immutable after parsing; SplitByRoute may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/record_batch.h>

#include "base/status.h"

namespace weir::records {

struct RouteTemplate {
  std::string prefix;  // before `{field}`
  std::string field;   // the top-level field (or mapping column) whose value names the table
  std::string suffix;  // after `}`
};

// `<prefix>{<field>}<suffix>`: exactly one placeholder, the field an identifier, prefix and
// suffix made of [A-Za-z0-9_] only. The error says what is wrong.
Result<RouteTemplate> ParseRouteTemplate(std::string_view text);

struct RouteRule {
  RouteTemplate route;
  std::string fallback;            // the dataset's table (folded)
  std::set<std::string> allow;     // folded; empty: every valid name
  std::set<std::string> reserved;  // folded names that are never a routed table
};

struct RouteSplit {
  // Routed table (folded name) → its rows (ascending row indices).
  std::map<std::string, std::vector<int64_t>> tables;
  std::vector<int64_t> fallback;                    // rows for the dataset's own table, ascending
  std::map<std::string, int64_t> fallback_reasons;  // rows sent to the fallback, by reason
};

// Splits the rows of `batch` by the table the rule names for each.
RouteSplit SplitByRoute(const arrow::RecordBatch& batch, const RouteRule& rule);

// The table name for one field value under `rule` (folded), or the fallback reason (as
// SplitByRoute decides; `value` is the text of a string or integer).
struct RouteName {
  std::string table;   // set: routed
  std::string reason;  // set: fallback for this reason ("" with table == fallback: no reason)
};
RouteName NameFor(std::string_view value, const RouteRule& rule);

}  // namespace weir::records
