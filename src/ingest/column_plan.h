// How the columns of one decoded batch land in a table: the field-name policy's last step.
//
// The decoder (decode/field_names.h) guarantees that no batch field carries a reserved or
// invalid name and that one record holds at most one spelling of a name; several records of a
// batch may still spell one name differently (`Name`, `name`), each spelling its own batch
// field. The plan resolves every field to a table column the way the destination resolves
// names (case-insensitively): onto the live column of that name, whatever its spelling, or onto
// one new column per name (first spelling seen, type joined over the spellings). The same plan
// drives table creation, column addition and the rows written, so they can never disagree.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <arrow/type.h>

#include "lake/table.h"

namespace weir::ingest {

// Live column types weir writes values into (the others are left null).
inline bool IsWritable(lake::ColumnType type) {
  return type != lake::ColumnType::kOther && type != lake::ColumnType::kInteger &&
         type != lake::ColumnType::kFloat;
}

struct ColumnPlan {
  // Per live column, in table order: the batch fields that resolve to it, in batch order.
  std::vector<std::vector<int>> sources;
  struct NewColumn {
    std::string name;         // the first spelling in the batch
    lake::ColumnType type;    // holds every spelling's values
    std::vector<int> fields;  // batch fields that resolve to it
  };
  // Columns the table lacks, in batch order.
  std::vector<NewColumn> missing;
  // Batch fields left out because the catalog refused their name (see `refused`).
  std::vector<int> refused;
};

// Resolves `batch`'s fields onto `live`. `refused` holds folded names (decode::FoldName) the
// catalog refused to add: fields of those names are listed in `refused`, never in `missing`.
ColumnPlan PlanColumns(const arrow::Schema& batch, const std::vector<lake::Column>& live,
                       const std::set<std::string>& refused);

// The column type that holds values of both types (bigint with double is double; other
// mixes are varchar), as the decoder promotes kinds.
lake::ColumnType JoinColumnTypes(lake::ColumnType a, lake::ColumnType b);

}  // namespace weir::ingest
