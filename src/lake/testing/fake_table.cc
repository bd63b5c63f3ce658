#include "lake/testing/fake_table.h"

#include <algorithm>
#include <filesystem>

#include <arrow/array.h>
#include <arrow/filesystem/localfs.h>
#include <arrow/scalar.h>
#include <fmt/format.h>

namespace weir::lake::testing {
namespace {

int64_t NextSequence() {
  static int64_t sequence = 0;
  return ++sequence;
}

}  // namespace

int64_t FakeTableState::LandedRows() const {
  int64_t rows = 0;
  for (const auto& snapshot : snapshots) {
    for (const auto& file : snapshot.files) rows += file.info.rows;
  }
  return rows;
}

FakeTable::FakeTable(std::shared_ptr<FakeTableState> state,
                     std::shared_ptr<arrow::fs::FileSystem> fs, std::string directory)
    : state_(std::move(state)),
      fs_(std::move(fs)),
      directory_(std::move(directory)),
      columns_(state_->columns) {}

Result<EvolveResult> FakeTable::Evolve(const SchemaChange& change) {
  ++state_->evolve_calls;
  if (state_->dropped) return EvolveResult{EvolveStatus::kTableChanged, "table dropped"};
  if (state_->changed_evolves > 0) {
    --state_->changed_evolves;
    return EvolveResult{EvolveStatus::kTableChanged, "changed by another writer"};
  }
  for (const auto& [name, type] : change.add) {
    if (state_->refused_names.count(name)) {
      return EvolveResult{EvolveStatus::kRefused, "column name \"" + name + "\" refused"};
    }
  }
  for (const auto& [name, type] : change.promote) {
    auto live = std::find_if(state_->columns.begin(), state_->columns.end(),
                             [&](const Column& c) { return c.name == name; });
    if (live == state_->columns.end() || PromotionFor(live->type, type) != type) {
      return EvolveResult{EvolveStatus::kRefused, "cannot promote \"" + name + "\""};
    }
  }
  for (const auto& [name, type] : change.promote) {
    for (auto& column : state_->columns) {
      if (column.name == name) column.type = type;
    }
  }
  for (const auto& [name, type] : change.add) {
    const bool present = std::any_of(state_->columns.begin(), state_->columns.end(),
                                     [&](const Column& c) { return c.name == name; });
    if (!present) state_->columns.push_back(Column{state_->next_column_id++, name, type});
  }
  columns_ = state_->columns;
  return EvolveResult{};
}

Result<std::vector<PartitionGroup>> FakeTable::Partition(const arrow::RecordBatch& rows) const {
  std::map<std::vector<PartitionValue>, std::vector<int64_t>> groups;
  std::vector<std::shared_ptr<arrow::Array>> keys;
  for (const auto& key : state_->partitioning) {
    if (key.transform.kind != TransformKind::kIdentity) {
      return Status::NotImplemented("the fake table partitions by identity only");
    }
    keys.push_back(rows.GetColumnByName(key.column));
  }
  for (int64_t row = 0; row < rows.num_rows(); ++row) {
    std::vector<PartitionValue> values;
    for (const auto& array : keys) {
      if (!array || array->IsNull(row)) {
        values.emplace_back();
        continue;
      }
      WEIR_ASSIGN_OR_RAISE(auto scalar, array->GetScalar(row));
      values.emplace_back(scalar->ToString());
    }
    groups[std::move(values)].push_back(row);
  }
  std::vector<PartitionGroup> out;
  for (auto& [values, indices] : groups) out.push_back({values, std::move(indices)});
  return out;
}

Result<std::map<int32_t, int64_t>> FakeTable::ReadLedger(const std::string& topic) {
  std::map<int32_t, int64_t> out;
  for (const auto& [key, next] : state_->ledger) {
    if (key.first == topic) out[key.second] = next;
  }
  return out;
}

std::string FakeTable::NewFilePath(const std::vector<PartitionValue>& partition_values) {
  std::string prefix;
  for (const auto& value : partition_values) prefix += value.value_or("null") + "_";
  return fmt::format("{}{}-{}.parquet", prefix, state_->commit_calls, ++files_named_);
}

CommitResult FakeTable::Land(const CommitRequest& request) {
  CommitResult out;
  size_t landed = 0;
  int64_t landed_snapshot = -1;
  for (const auto& range : request.offsets) {
    const auto key = std::pair{range.topic, range.partition};
    const auto found = state_->ledger.find(key);
    if (found == state_->ledger.end()) continue;
    if (found->second == range.end && state_->ledger_writer[key] == request.writer) {
      ++landed;
      for (const auto& snapshot : state_->snapshots) {
        if (snapshot.writer == request.writer) landed_snapshot = snapshot.id;
      }
    } else if (found->second != range.start) {
      out.fenced_ranges.push_back(range);
    }
  }
  if (landed > 0 && landed == request.offsets.size()) {
    return CommitResult{CommitStatus::kAlreadyCommitted, landed_snapshot, {}, ""};
  }
  if (!out.fenced_ranges.empty()) {
    out.status = CommitStatus::kFenced;
    return out;
  }
  FakeTableState::Snapshot snapshot{
      state_->next_snapshot_id++, NextSequence(), request.writer, request.files,
      request.companion_files,    request.offsets};
  for (const auto& range : request.offsets) {
    state_->ledger[{range.topic, range.partition}] = range.end;
    state_->ledger_writer[{range.topic, range.partition}] = request.writer;
  }
  state_->snapshots.push_back(std::move(snapshot));
  out.status = CommitStatus::kCommitted;
  out.snapshot_id = state_->snapshots.back().id;
  return out;
}

Result<CommitResult> FakeTable::Commit(const CommitRequest& request) {
  ++state_->commit_calls;
  state_->requests.push_back(request);
  if (state_->before_commit) state_->before_commit(*state_);
  if (request.companion != nullptr && !state_->commits_companion) {
    return Status::Invalid("the fake table takes no companion files");
  }
  FakeStep step = FakeStep::kLand;
  if (!state_->script.empty()) {
    step = state_->script.front();
    state_->script.pop_front();
  }
  switch (step) {
    case FakeStep::kLand:
      return Land(request);
    case FakeStep::kConflict:
      return CommitResult{CommitStatus::kConflict, -1, {}, "another writer took the snapshot"};
    case FakeStep::kTableChanged:
      return CommitResult{CommitStatus::kTableChanged, -1, {}, "a column of the files is gone"};
    case FakeStep::kLandUnknown: {
      const CommitResult landed = Land(request);
      if (landed.status != CommitStatus::kCommitted) return landed;
      return CommitResult{CommitStatus::kOutcomeUnknown, -1, {}, "connection lost at COMMIT"};
    }
    case FakeStep::kLostUnknown:
      return CommitResult{CommitStatus::kOutcomeUnknown, -1, {}, "connection lost at COMMIT"};
    case FakeStep::kRetriableError:
      return ClassifiedError(ErrorClass::kRetriable, "fake", "unreachable",
                             "the catalog is unreachable");
    case FakeStep::kFatalError:
      return ClassifiedError(ErrorClass::kFatal, "fake", "denied", "permission denied");
  }
  return Status::UnknownError("unreachable");
}

Result<std::optional<int64_t>> FakeTable::FindCommit(const CommitRequest& request) {
  ++state_->find_calls;
  if (!state_->find_errors.empty()) {
    Status error = state_->find_errors.front();
    state_->find_errors.pop_front();
    return error;
  }
  for (const auto& snapshot : state_->snapshots) {
    if (snapshot.writer == request.writer) return std::optional<int64_t>(snapshot.id);
  }
  return std::optional<int64_t>();
}

FakeCatalog::FakeCatalog(std::string directory, std::shared_ptr<arrow::fs::FileSystem> fs)
    : directory_(std::move(directory)),
      fs_(fs ? std::move(fs) : std::make_shared<arrow::fs::LocalFileSystem>()) {
  std::filesystem::create_directories(directory_);
  if (!directory_.empty() && directory_.back() != '/') directory_ += '/';
}

Status FakeCatalog::CheckSpec(const TableSpec& spec, std::string_view setting) const {
  if (!spec.sort_keys.empty()) return Status::Invalid(setting, ": the fake has no sort keys");
  for (const auto& key : spec.partitioning) {
    if (key.transform.kind != TransformKind::kIdentity) {
      return Status::Invalid(setting, ": the fake partitions by identity only, not ",
                             ToString(key));
    }
  }
  return Status::OK();
}

FakeTableState& FakeCatalog::state(const std::string& qualified_name) {
  auto& state = tables_[qualified_name];
  if (!state) {
    state = std::make_shared<FakeTableState>();
    state->name = qualified_name;
  }
  return *state;
}

Result<std::vector<TableName>> FakeCatalog::ListTables() {
  std::vector<TableName> names;
  for (const auto& [name, state] : tables_) {
    const size_t dot = name.find('.');
    names.push_back({name.substr(0, dot), name.substr(dot + 1)});
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<OpenResult> FakeCatalog::OpenTable(const TableSpec& spec, OpenMode mode) {
  if (!open_errors.empty()) {
    Status error = open_errors.front();
    open_errors.pop_front();
    return error;
  }
  const std::string name = spec.schema + "." + spec.table;
  auto found = tables_.find(name);
  if (found == tables_.end()) {
    if (mode != OpenMode::kOpenOrCreate) return OpenResult{OpenStatus::kMissing, nullptr, ""};
    auto state = std::make_shared<FakeTableState>();
    state->name = name;
    for (const auto& [column, type] : spec.columns) {
      if (state->refused_names.count(column)) {
        return OpenResult{OpenStatus::kColumnsRefused, nullptr, "refused " + column};
      }
      state->columns.push_back(Column{state->next_column_id++, column, type});
    }
    state->partitioning = spec.partitioning;
    found = tables_.emplace(name, std::move(state)).first;
  } else if (found->second->columns.empty() && mode == OpenMode::kOpenOrCreate) {
    // Made by state() before the writer came: give it the spec's columns, as creation would,
    // but refuse the refused names as a real catalog does.
    auto& state = *found->second;
    for (const auto& [column, type] : spec.columns) {
      if (state.refused_names.count(column)) {
        return OpenResult{OpenStatus::kColumnsRefused, nullptr, "refused " + column};
      }
    }
    for (const auto& [column, type] : spec.columns) {
      state.columns.push_back(Column{state.next_column_id++, column, type});
    }
    state.partitioning = spec.partitioning;
  }
  auto& state = found->second;
  if (mode != OpenMode::kOpenAsIs && state->partitioning != spec.partitioning) {
    return ClassifiedError(ErrorClass::kFatal, "fake", "layout_mismatch",
                           name + " is partitioned by " + ToString(state->partitioning));
  }
  ++state->opens;
  const std::string directory = directory_ + name + "/";
  WEIR_RETURN_NOT_OK(fs_->CreateDir(directory));
  return OpenResult{OpenStatus::kOpened, std::make_unique<FakeTable>(state, fs_, directory), ""};
}

}  // namespace weir::lake::testing
