#include "base/status.h"

#include <utility>

#include "base/check.h"

namespace weir {

std::string_view ToString(ErrorClass error_class) {
  switch (error_class) {
    case ErrorClass::kRetriable:
      return "retriable";
    case ErrorClass::kFatal:
      return "fatal";
    case ErrorClass::kBadData:
      return "bad_data";
  }
  return "unknown";
}

ErrorDetail::ErrorDetail(ErrorClass error_class, std::string source, std::string code)
    : error_class_(error_class), source_(std::move(source)), code_(std::move(code)) {}

std::string ErrorDetail::ToString() const {
  return std::string(weir::ToString(error_class_)) + " " + source_ + ":" + code_;
}

Status ClassifiedError(ErrorClass error_class, std::string source, std::string code,
                       std::string message) {
  arrow::StatusCode status_code = arrow::StatusCode::UnknownError;
  switch (error_class) {
    case ErrorClass::kRetriable:
      status_code = arrow::StatusCode::IOError;
      break;
    case ErrorClass::kBadData:
      status_code = arrow::StatusCode::Invalid;
      break;
    case ErrorClass::kFatal:
      status_code = arrow::StatusCode::UnknownError;
      break;
  }
  return Status(status_code, std::move(message),
                std::make_shared<ErrorDetail>(error_class, std::move(source), std::move(code)));
}

const ErrorDetail* GetErrorDetail(const Status& status) {
  const auto& detail = status.detail();
  if (detail == nullptr || std::string_view(detail->type_id()) != ErrorDetail::kTypeId) {
    return nullptr;
  }
  return static_cast<const ErrorDetail*>(detail.get());
}

ErrorClass ClassOf(const Status& status) {
  WEIR_DCHECK(!status.ok());
  if (const ErrorDetail* detail = GetErrorDetail(status)) return detail->error_class();
  return status.IsIOError() ? ErrorClass::kRetriable : ErrorClass::kFatal;
}

Status WithContext(const Status& status, std::string_view context) {
  if (status.ok()) return status;
  return status.WithMessage(std::string(context) + ": " + status.message());
}

}  // namespace weir
