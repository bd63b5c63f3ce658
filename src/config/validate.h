// Checks of settings that no single value shows: required settings, identifiers, partition
// keys, uniqueness across datasets and rules between settings, for ingest and for serve.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "config/setting_table.h"
#include "config/settings.h"

namespace weir::config {

// Where each set value came from ("WEIR_TOPIC", "weir.yaml line 4"), by setting name, so an
// error can name it. Values at their default have no entry.
struct Origins {
  std::map<std::string, std::string> process;
  std::vector<std::map<std::string, std::string>> datasets;  // parallel to datasets
  std::map<std::string, std::string> every_table;            // IngestSettings::every_table
};

// One partition key: `transform` is "identity", "year", "month", "day" or "hour".
struct PartitionKey {
  std::string transform;
  std::string column;
};

// "team_id" → identity(team_id); "month(_inserted_at)" → month(_inserted_at); nullopt when the
// text is neither a plain identifier nor year|month|day|hour(<identifier>).
std::optional<PartitionKey> ParsePartitionKey(std::string_view text);

// True for [A-Za-z_][A-Za-z0-9_]*.
bool IsIdentifier(std::string_view text);

// One error line: `<setting>: <problem> (dataset "<dataset>", from <origin>)`; the dataset and
// the origin are left out when empty.
std::string SettingError(std::string_view setting, std::string_view problem,
                         std::string_view dataset, std::string_view origin);

// Every problem found, one message each, naming the setting, the value and its origin. Which
// settings are required, and whether datasets are, is `command`'s (config/setting_table.h
// NeedsOf, IsRequired): weir ingest or weir maintain, both of which read IngestSettings.
std::vector<std::string> ValidationErrors(const IngestSettings& settings, const Origins& origins,
                                          Command command = Command::kIngest);
std::vector<std::string> ValidationErrors(const ServeSettings& settings, const Origins& origins);

// True for a memory size in DuckDB's grammar of its memory_limit setting: a number, optional
// spaces and a unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, K, M, G, T or the words; any case).
bool IsDuckDbMemorySize(std::string_view text);

// ValidationErrors as one Invalid status (one error per line), or OK.
Status ValidateIngestSettings(const IngestSettings& settings);

}  // namespace weir::config
