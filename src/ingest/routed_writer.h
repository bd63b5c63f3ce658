// The writer of a routed dataset (route.template, issue 14): each flush's rows split by the
// table their route field names (records/route.h), every routed table committed with a ledger
// of its own, FIRST, then the dataset's own table (the fallback, with the rejects) with the
// dataset's ledger, LAST. It generalises the rejects-first protocol (docs/ARCHITECTURE.md,
// "Rejects exactly once without a shared snapshot") from one companion table to many, on
// every format, through one DatasetWriter per table:
//  - per routed table T with ledger R: the rows of T at or beyond R(p) (per partition p), and
//    R moved from where it stands (the flush's start when absent) to the flush's end for
//    every partition whose end is beyond it; rows below R are in T already (a replay);
//  - R(p) below the flush's start s claims [R(p), s) too: only true when the dataset's ledger
//    D(p) reached s, else the flush is fenced (an earlier flush has not landed);
//  - a fence of T's commit means another writer moved R: plan again (three rounds, then the
//    flush is fenced);
//  - the dataset's table commits last with [s, e), rows or none: D is where a restart resumes,
//    and every table's rows below max(D, R) are in that table, so resuming from D (which is
//    min over the tables of max(D, R)) loses and duplicates nothing.
// The cap: a writer creates a routed table only while it has fewer than max_tables open; a
// name whose table exists is always written to (so a replay never moves a committed record),
// any other new name goes to the fallback (over_cap).
//
// Threading: one per routed dataset, called from that dataset's flush thread only.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <stop_token>
#include <string>

#include "base/status.h"
#include "ingest/dataset_writer.h"
#include "lake/catalog.h"
#include "records/route.h"

namespace weir::ingest {

struct RouteConfig {
  records::RouteRule rule;
  int max_tables = 100;
  // Folded names of configured columns (metadata, typed, mapping) that every routed table's
  // rows keep even when all null; other all-null columns of a table's rows are left out, so
  // one table does not get the columns of another's events.
  std::set<std::string> keep_columns;
};

struct RoutedOutcome {
  FlushOutcome total;  // summed over the tables (snapshot_id: the dataset's table's)
  std::map<std::string, int64_t> routed_rows;       // per routed table, rows committed now
  std::map<std::string, int64_t> fallback_reasons;  // rows sent to the dataset's table
};

class RoutedWriter {
 public:
  RoutedWriter(DatasetConfig config, RouteConfig route, lake::Catalog* catalog,
               std::stop_token stop = {});

  // Writes and commits `flush` (whose row_partitions/row_offsets are set) to its tables.
  // Errors and fences as DatasetWriter::Write.
  Result<RoutedOutcome> Write(const SealedFlush& flush);
  // As DatasetWriter::SetRetryObserver, for every table's writer.
  void SetRetryObserver(std::function<void(const Status&)> observer);

 private:
  enum class Landed { kLanded, kFenced };
  // Commits the rows `rows` of `flush` to `table`'s writer under the protocol above.
  Result<Landed> CommitRouted(const std::string& table, const SealedFlush& flush,
                              const std::vector<int64_t>& rows, RoutedOutcome& outcome);
  // The writer of `table`, or nullptr when it would be a table beyond the cap.
  Result<DatasetWriter*> WriterFor(const std::string& table);

  DatasetConfig config_;
  RouteConfig route_;
  lake::Catalog* catalog_;
  std::stop_token stop_;
  DatasetWriter home_;
  std::map<std::string, std::unique_ptr<DatasetWriter>> routed_;
  std::function<void(const Status&)> on_retry_;
  std::set<std::string> over_cap_;  // names found missing at the cap: fallback for good
};

}  // namespace weir::ingest
