#include "config/settings.h"

namespace weir::config {

std::string_view ToString(Assignment assignment) {
  return assignment == Assignment::kStatic ? "static" : "group";
}

std::string_view ToString(IcebergDeletes deletes) {
  return deletes == IcebergDeletes::kDeletionVectors ? "deletion_vectors" : "equality";
}

std::string_view ToString(CatalogKind kind) {
  return kind == CatalogKind::kPostgres ? "postgres" : "sqlite";
}

}  // namespace weir::config
