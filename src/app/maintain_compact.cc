#include "app/maintain_compact.h"

#include <fmt/format.h>

#include "app/ingest_command.h"
#include "base/number_text.h"

namespace weir::app {

maintain::CompactionOptions CompactionOptionsOf(const config::DatasetSettings& d,
                                                const std::string& table_name,
                                                std::optional<int64_t> target_size) {
  maintain::CompactionOptions options;
  options.target_file_bytes = target_size.value_or(d.maintain.target_file_size);
  if (!target_size) {  // the configured tiers; a --target-size of its own derives them (0)
    options.small_file_bytes = d.maintain.small_file_size;
    options.large_file_bytes = d.maintain.large_file_size;
  }
  options.file = FileConfigOf(d);
  const bool rejects = table_name.ends_with("." + d.table + "_rejects");
  if (!rejects) options.sort_keys = SortKeysOf(d);
  return options;
}

maintain::CompactionOptions CompactionOptionsOf(const config::DatasetSettings& d,
                                                const lake::Table& table,
                                                std::optional<int64_t> target_size) {
  return CompactionOptionsOf(d, table.name(), target_size);
}

Result<CompactOutcome> CompactTable(lake::Table& table, const config::DatasetSettings& d,
                                    std::optional<int64_t> target_size, bool dry_run) {
  maintain::CompactionOptions options = CompactionOptionsOf(d, table, target_size);
  // Asked for by hand, compaction merges medium files too (any two of a partition), as the
  // scheduled medium pass does: a quiet table ends in files of at least half the target.
  options.min_medium_files = 2;
  options.dry_run = dry_run;
  CompactOutcome out;
  WEIR_ASSIGN_OR_RAISE(out.report, maintain::Compact(table, options));
  const auto& r = out.report;
  if (dry_run) {
    out.text =
        fmt::format("{}: would merge {} file(s) ({}, {} rows) in {} run(s) into files of {}\n",
                    table.name(), r.files_in, BytesText(static_cast<double>(r.bytes_in)), r.rows,
                    r.runs_planned, BytesText(static_cast<double>(options.target_file_bytes)));
  } else {
    out.text = fmt::format(
        "{}: merged {} file(s) ({}) into {} ({}), {} rows, in {} of {} run(s){}{}; {:.1f}s\n",
        table.name(), r.files_in, BytesText(static_cast<double>(r.bytes_in)), r.files_out,
        BytesText(static_cast<double>(r.bytes_out)), r.rows, r.runs_committed, r.runs_planned,
        r.runs_given_up > 0 ? fmt::format(", {} given up", r.runs_given_up) : "",
        r.conflicts_retried > 0 ? fmt::format(", {} conflict(s) retried", r.conflicts_retried) : "",
        r.seconds);
  }
  return out;
}

}  // namespace weir::app
