#include "config/docs.h"

#include <set>
#include <string_view>

#include <fmt/format.h>

#include "config/millpond_env.h"
#include "config/setting_table.h"
#include "config/setting_value.h"
#include "config/units.h"

namespace weir::config {
namespace {

constexpr std::string_view kIntro = R"(# Configuration reference

Generated from the settings table in `src/config/setting_table.cc` by `weir_config_docs`; do not
edit by hand (a unit test fails when this file is stale).

`weir ingest` reads one YAML file (`--config weir.yaml`) describing the Kafka connection, the
lake and any number of **datasets** (one topic into one table each). Every setting can also be
given in the environment, and the environment contract of millpond is accepted as-is, so a
millpond DuckLake deployment can switch binaries without changing its manifests.

`weir serve` reads the same sources (`weir serve --config weir.yaml`): the `serve.*` settings,
and the lake format, catalog (DuckLake's or Iceberg's), S3 credential and log settings it
shares with ingest (marked *Ingest and serve* below). Each command leaves the other's settings alone, so one file and one environment
can configure both.

`weir maintain` reads ingest's settings from the same sources but needs only the lake:
`lake.format`, the catalog (`catalog.*` for DuckLake, `iceberg.*` for an Iceberg SQL or REST
catalog) and `storage.*`. `kafka.*` settings and datasets may be given (a file shared with
ingest) and are never required: `kafka.bootstrap_servers` and `topic` are required by
`weir ingest` and `weir check` only, and the rules between `kafka.*` settings are theirs too.
With datasets it maintains their tables (and rejects tables); a dataset setting given without a
dataset describes one only together with `table`. Without datasets it maintains every table of
the lake (`--table` picks some), and the dataset settings given without a dataset
(`WEIR_MAINTAIN_EXPIRE_OLDER_THAN=2d`, `--set maintain.target_file_size=256MiB`) apply to every
table.

## Precedence

Lowest first; a later source replaces an earlier one setting by setting (map settings such as
`kafka.properties` merge key by key):

1. defaults (below)
2. the YAML file
3. millpond variables (`KAFKA_TOPIC`, `FLUSH_SIZE`, ...; table at the end); `weir serve` takes
   only those of the settings it shares (`DUCKLAKE_RDS_*`, `DUCKDB_S3_*`, `LOG_LEVEL`)
4. `WEIR_` variables
5. `--set <setting>=<value>` on the command line, and the shortcut flags listed by
   `weir ingest --help`, `weir maintain --help` and `weir serve --help` (`weir serve --port
   5433` is `--set serve.port=5433`; `--format`, `--catalog-sqlite`, `--catalog-postgres` are
   the lake's everywhere)

All settings are checked before anything starts. Every problem is reported at once, one per
line, naming the setting, the bad value and where it came from, e.g.
`flush.max_bytes: value "12x" is not a byte size (...) (dataset "events", from WEIR_FLUSH_MAX_BYTES)`.
Unknown YAML keys are errors; unknown `WEIR_` and `MILLPOND_` variables are logged as warnings.
`--set` of a setting the command does not read is an error.

## Environment variables

- A process setting `a.b_c` is `WEIR_A_B_C` (`kafka.bootstrap_servers` →
  `WEIR_KAFKA_BOOTSTRAP_SERVERS`).
- A dataset setting without a dataset name applies to **every** dataset (with one dataset: that
  dataset): `WEIR_FLUSH_MAX_BYTES=64MiB`. When the YAML declares no dataset, such variables
  (or the millpond `KAFKA_TOPIC` / `DUCKLAKE_TABLE`) define a single one.
- `WEIR_DATASET_<NAME>_<SETTING>` sets one YAML dataset, `<NAME>` being its name (or table)
  upper-cased with other characters as `_`: `WEIR_DATASET_EVENTS_FLUSH_INTERVAL=30s`. It wins
  over the unprefixed form.
- Map settings take one variable per key: `WEIR_KAFKA_PROPERTIES_SECURITY_PROTOCOL=SASL_SSL`
  sets `security.protocol` (lower case, `_` → `.`).
- Lists are comma separated: `WEIR_PARTITION_BY=year(_inserted_at),month(_inserted_at)`.

`--set` takes the same names as YAML: `--set kafka.group_id=ingest`,
`--set kafka.properties.security.protocol=SASL_SSL`, `--set flush.max_bytes=64MiB` (every
dataset) or `--set datasets.events.flush.max_bytes=64MiB` (one dataset).

## Value formats

- **bytes**: an integer, optionally with a unit: `KiB`, `MiB`, `GiB`, `TiB` (1024-based) or
  `KB`, `MB`, `GB`, `TB` (1000-based), any case: `1048576`, `64KiB`, `100MiB`, `1GB`.
- **duration**: integers with units `ms`, `s`, `m`, `h`, possibly summed: `500ms`, `60s`,
  `2m`, `1m30s`. A bare number is refused (which unit?), except millpond's `*_MS` variables.
- **bool**: `true`/`false` (also `yes`/`no`, `on`/`off`, `1`/`0`).
- **enum**: one of the listed values, any case.
- **list**: a YAML sequence, or a comma-separated string.
- **map**: a YAML mapping of names to scalars.

## Example

```yaml
kafka:
  bootstrap_servers: kafka-1:9092,kafka-2:9092
  properties:
    security.protocol: SASL_SSL
catalog:
  kind: postgres
  postgres_dsn: host=pg dbname=ducklake user=weir
storage:
  data_path: s3://lake/weir/
  s3_region: us-east-1
datasets:
  - topic: events
    table: events
    partition_by: [year(_inserted_at), month(_inserted_at)]
  - topic: pageviews
    table: pageviews
    flush: {max_bytes: 256MiB, interval: 2m}
serve:
  host: 0.0.0.0
  statement_timeout: 5m
```
)";

constexpr std::string_view kRules = R"(
## Rules between settings

- `kafka.assignment: static` needs `kafka.ordinal` below `kafka.replica_count`; unless set, the
  ordinal is the trailing `-<n>` of `POD_NAME`, else of `HOSTNAME` (`weir-3` → 3).
- `catalog.kind: postgres` needs `catalog.postgres_dsn` or `catalog.postgres_host` (not both);
  from the host, port, database, user and password a libpq conninfo is built.
- An `s3://bucket/prefix/` data path needs `storage.s3_region` or `storage.s3_endpoint`; the
  S3 key id and secret are set together or not at all (then the default credential chain).
- Dataset names, topics and schema-qualified tables are unique; names, schemas and tables are
  identifiers (`[A-Za-z_][A-Za-z0-9_]*`).
- A partition key is a column name (identity) or `year|month|day|hour(<column>)`, the column an
  identifier such as `_inserted_at`; an Iceberg lake also takes `bucket[N](<column>)` and
  `truncate[W](<column>)` with N, W ≥ 1 (DuckLake refuses them at startup).
- `lake.format: iceberg` with nothing else set writes the embedded Iceberg lake: the SQL catalog
  `weir-lake/catalog.db` (SQLite) and tables under `weir-lake/warehouse/<schema>/<table>`.
  `iceberg.catalog: rest` needs `iceberg.uri`, and at most one of `iceberg.token` /
  `iceberg.credential` (`client_id:client_secret`).
- `weir serve` with `lake.format: iceberg` reads the lake through a REST catalog only
  (`iceberg.catalog: rest`; DuckDB's iceberg extension has no SQL catalog): `sql` stops its
  startup naming `iceberg.catalog`.
- `group.id` and `auto.offset.reset` are not accepted in `kafka.properties` (use their settings).

Secrets (`catalog.postgres_password`, `storage.s3_secret_access_key`, the password in
`catalog.postgres_dsn`, and `kafka.properties` whose name contains password, secret, jaas or
token) are printed as `****` in the startup log and by `weir check`.
)";

constexpr std::string_view kServeIntro =
    R"(`weir serve`'s own settings; it also reads the lake format, catalog, S3 credential and log
settings marked *Ingest and serve*. Two secrets are read only from the environment, never from a file
or the command line, and stored only as SCRAM verifiers in `<serve.tls_dir>/users`:
`WEIR_SERVE_PASSWORD`, the password of user `weir` when the users file is first created, and
`WEIR_SERVE_NEW_PASSWORD`, that of `weir serve --add-user NAME --role read|write`. Without
them a password is generated and printed once.

)";

std::string Cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string TypeName(const Setting& setting) {
  switch (setting.type) {
    case SettingType::kString:
      return "string";
    case SettingType::kInt:
      return "int";
    case SettingType::kBool:
      return "bool";
    case SettingType::kBytes:
      return "bytes";
    case SettingType::kDuration:
      return "duration";
    case SettingType::kEnum: {
      std::vector<std::string> values;
      for (const std::string_view value : setting.allowed)
        values.push_back(fmt::format("`{}`", value));
      return fmt::format("{}", fmt::join(values, " | "));
    }
    case SettingType::kStringList:
      return "list";
    case SettingType::kStringMap:
      return "map";
  }
  return "";
}

std::string DefaultText(const Setting& setting) {
  if (!setting.default_note.empty()) return std::string(setting.default_note);
  if (setting.required.Has(Command::kIngest)) {
    return setting.required.Has(Command::kMaintain) ? "**required**"
                                                    : "**required** (not by `weir maintain`)";
  }
  const std::string text = FormatValue(setting, DefaultValue(setting));
  return text.empty() ? "" : fmt::format("`{}`", text);
}

std::string BoundsText(const Setting& setting) {
  const auto bound = [&setting](int64_t value) {
    if (setting.type == SettingType::kBytes) return FormatByteSize(value);
    if (setting.type == SettingType::kDuration) {
      return FormatDuration(std::chrono::milliseconds(value));
    }
    return std::to_string(value);
  };
  if (setting.min && setting.max) return bound(*setting.min) + " – " + bound(*setting.max);
  if (setting.min) return "≥ " + bound(*setting.min);
  if (setting.max) return "≤ " + bound(*setting.max);
  return "";
}

std::string EnvText(const Setting& setting) {
  const std::string env = EnvName(setting);
  if (env.empty()) return "";
  return setting.type == SettingType::kStringMap ? fmt::format("`{}<KEY>`", env)
                                                 : fmt::format("`{}`", env);
}

std::string SectionOf(const Setting& setting) {
  if (setting.scope == Scope::kDataset) return "Datasets";
  const std::string_view head = setting.name.substr(0, setting.name.find('.'));
  if (head == "kafka") return "Kafka";
  if (head == "catalog") return "Catalog";
  if (head == "storage") return "Storage";
  if (head == "serve") return "Serve";
  return "Process";
}

void RenderSection(std::string_view section, std::string* out) {
  *out += fmt::format("\n## {}\n\n", section);
  if (section == "Datasets") {
    *out += "Each entry of `datasets:` has these settings (names relative to the entry).\n\n";
  }
  if (section == "Serve") *out += kServeIntro;
  *out += "| Setting | Type | Default | Bounds | Environment | millpond | Description |\n";
  *out += "|---|---|---|---|---|---|---|\n";
  for (const Setting& setting : SettingTable()) {
    if (SectionOf(setting) != section) continue;
    const std::string millpond =
        setting.millpond_env.empty() ? "" : fmt::format("`{}`", setting.millpond_env);
    const bool shared = UsedBy(setting, Command::kIngest) && UsedBy(setting, Command::kServe);
    *out +=
        fmt::format("| `{}` | {} | {} | {} | {} | {} | {}{}{} |\n", FullName(setting),
                    Cell(TypeName(setting)), Cell(DefaultText(setting)), Cell(BoundsText(setting)),
                    Cell(EnvText(setting)), Cell(millpond), Cell(setting.description),
                    setting.secrecy == Secrecy::kPublic ? "" : " *Secret.*",
                    shared ? " *Ingest and serve.*" : "");
  }
}

void RenderMillpond(std::string* out) {
  *out += R"(
## The millpond environment

The millpond contract describes one DuckLake dataset (`KAFKA_TOPIC` into `DUCKLAKE_TABLE`).
Its variables map to these settings; refused variables stop the start with an error, unused
ones and unknown `MILLPOND_*` variables are logged as warnings.

| Variable | weir |
|---|---|
)";
  std::set<std::string_view> done;
  const auto special = [](std::string_view name) -> const MillpondVariable* {
    for (const MillpondVariable& variable : MillpondVariables()) {
      if (variable.name == name) return &variable;
    }
    return nullptr;
  };
  for (const Setting& setting : SettingTable()) {
    if (setting.millpond_env.empty() || !done.insert(setting.millpond_env).second) continue;
    const MillpondVariable* variable = special(setting.millpond_env);
    *out += fmt::format(
        "| `{}` | {} |\n", setting.millpond_env,
        Cell(variable ? std::string(variable->note) : fmt::format("`{}`", FullName(setting))));
  }
  for (const MillpondVariable& variable : MillpondVariables()) {
    if (!done.insert(variable.name).second) continue;
    const std::string_view how = variable.handling == MillpondHandling::kRefused   ? "refused: "
                                 : variable.handling == MillpondHandling::kIgnored ? "not used: "
                                                                                   : "";
    *out += fmt::format("| `{}` | {}{} |\n", variable.name, how, Cell(variable.note));
  }
}

}  // namespace

std::string RenderConfigurationMarkdown() {
  std::string out(kIntro);
  for (const std::string_view section :
       {"Kafka", "Catalog", "Storage", "Process", "Datasets", "Serve"}) {
    RenderSection(section, &out);
  }
  out += kRules;
  RenderMillpond(&out);
  return out;
}

}  // namespace weir::config
