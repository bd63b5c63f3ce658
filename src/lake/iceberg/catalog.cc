#include "lake/iceberg/catalog.h"

#include <utility>

namespace weir::lake::iceberg {

std::string TableIdent::ToString() const {
  std::string out;
  for (const auto& level : namespace_levels) out += level + ".";
  return out + name;
}

std::string_view ToString(CommitOutcome outcome) {
  switch (outcome) {
    case CommitOutcome::kCommitted:
      return "committed";
    case CommitOutcome::kConflict:
      return "conflict";
    case CommitOutcome::kUnknown:
      return "unknown";
  }
  return "?";
}

std::string_view ToString(CatalogErrorKind kind) {
  switch (kind) {
    case CatalogErrorKind::kNotFound:
      return "not_found";
    case CatalogErrorKind::kAlreadyExists:
      return "already_exists";
    case CatalogErrorKind::kUnavailable:
      return "unavailable";
    case CatalogErrorKind::kRejected:
      return "rejected";
    case CatalogErrorKind::kProtocol:
      return "protocol";
  }
  return "?";
}

CatalogErrorDetail::CatalogErrorDetail(CatalogErrorKind kind, int http_status,
                                       std::string server_type)
    : ErrorDetail(
          kind == CatalogErrorKind::kUnavailable ? ErrorClass::kRetriable : ErrorClass::kFatal,
          "iceberg-catalog",
          std::string(iceberg::ToString(kind)) +
              (http_status != 0 ? ":" + std::to_string(http_status) : "")),
      kind_(kind),
      http_status_(http_status),
      server_type_(std::move(server_type)) {}

Status CatalogError(CatalogErrorKind kind, int http_status, std::string server_type,
                    std::string message) {
  auto code = kind == CatalogErrorKind::kUnavailable     ? arrow::StatusCode::IOError
              : kind == CatalogErrorKind::kNotFound      ? arrow::StatusCode::KeyError
              : kind == CatalogErrorKind::kAlreadyExists ? arrow::StatusCode::AlreadyExists
                                                         : arrow::StatusCode::Invalid;
  return Status(code, std::move(message),
                std::make_shared<CatalogErrorDetail>(kind, http_status, std::move(server_type)));
}

std::optional<CatalogErrorKind> CatalogErrorKindOf(const Status& status) {
  if (status.ok()) return std::nullopt;
  const auto* detail = dynamic_cast<const CatalogErrorDetail*>(status.detail().get());
  if (detail == nullptr) return std::nullopt;
  return detail->kind();
}

}  // namespace weir::lake::iceberg
