#include "config/validate_bloom.h"

#include <set>

#include <fmt/format.h>

#include "config/validate.h"
#include "decode/field_names.h"
#include "records/metadata_columns.h"
#include "records/typed_columns.h"
#include "records/variant_columns.h"

namespace weir::config {

std::vector<std::string> BloomFilterColumnProblems(const DatasetSettings& dataset) {
  std::vector<std::string> problems;
  if (dataset.bloom_filter_columns.empty()) return problems;
  std::set<std::string> booleans;
  if (auto pins = records::ParseTypedColumns(dataset.typed_columns); pins.ok()) {
    for (const auto& pin : *pins) {
      if (pin.type == records::TypedKind::kBoolean) booleans.insert(decode::FoldName(pin.column));
    }
  }
  // The columns a mapped dataset writes: its mapping's, its metadata columns, the variant
  // companions and the commit time. Without a mapping they come from the records.
  std::set<std::string> known;
  if (!dataset.mapping.empty()) {
    for (const auto& [column, expression] : dataset.mapping) known.insert(decode::FoldName(column));
    if (auto metadata = records::ParseMetadataColumns(dataset.metadata_columns); metadata.ok()) {
      for (const auto& column : *metadata) known.insert(decode::FoldName(column.column));
    }
    if (auto variant = records::ParseVariantColumns(dataset.variant_columns); variant.ok()) {
      for (const auto& column : *variant) known.insert(decode::FoldName(column + "_variant"));
    }
    known.insert(std::string(decode::kInsertedAtColumn));
  }
  std::set<std::string> seen;
  for (const std::string& column : dataset.bloom_filter_columns) {
    const std::string folded = decode::FoldName(column);
    if (!IsIdentifier(column)) {
      problems.push_back(
          fmt::format("value \"{}\" is not a column name ([A-Za-z_][A-Za-z0-9_]*)", column));
    } else if (!seen.insert(folded).second) {
      problems.push_back(fmt::format("column \"{}\" is listed twice", column));
    } else if (booleans.count(folded)) {
      problems.push_back(fmt::format(
          "column \"{}\" is a boolean typed column; Parquet has no bloom filter for booleans",
          column));
    } else if (!dataset.mapping.empty() && !known.count(folded)) {
      problems.push_back(fmt::format(
          "unknown column \"{}\": not a mapping, metadata or variant column of the dataset "
          "(nor _inserted_at)",
          column));
    }
  }
  return problems;
}

}  // namespace weir::config
