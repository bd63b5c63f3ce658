// Status and Result at every module boundary (Arrow's), plus weir's error classification.
//
// Every error that can reach the pipeline carries an ErrorDetail saying how to react to it:
// retry with backoff, stop cleanly, or reject the record and keep going. The detail holds the
// originating library's own code (a librdkafka error name, a SQLSTATE, an HTTP status), so
// callers decide by code, never by matching message text.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <arrow/result.h>
#include <arrow/status.h>

namespace weir {

using Status = arrow::Status;
template <typename T>
using Result = arrow::Result<T>;

#define WEIR_RETURN_NOT_OK(expr) ARROW_RETURN_NOT_OK(expr)
#define WEIR_ASSIGN_OR_RAISE(lhs, rexpr) ARROW_ASSIGN_OR_RAISE(lhs, rexpr)

// How a caller must react to an error.
enum class ErrorClass {
  kRetriable,  // transient: back off and try again (network, timeout, conflict, 5xx)
  kFatal,      // permanent: stop cleanly with a clear message (bad config, auth, schema refusal)
  kBadData,    // the record is at fault: reject it, count it, keep going
};

std::string_view ToString(ErrorClass error_class);

// The classification and the library's own code, attached to a Status.
class ErrorDetail : public arrow::StatusDetail {
 public:
  static constexpr const char* kTypeId = "weir::ErrorDetail";

  // `source` names the library or protocol ("librdkafka", "sqlstate", "http", "sqlite", ...);
  // `code` is its code for this error ("_TRANSPORT", "40001", "503", "SQLITE_BUSY", ...).
  ErrorDetail(ErrorClass error_class, std::string source, std::string code);

  const char* type_id() const override { return kTypeId; }
  std::string ToString() const override;

  ErrorClass error_class() const { return error_class_; }
  const std::string& source() const { return source_; }
  const std::string& code() const { return code_; }

 private:
  ErrorClass error_class_;
  std::string source_;
  std::string code_;
};

// Builds a classified error. The StatusCode is chosen to match the class (IOError for
// retriable, Invalid for bad data, the given code otherwise).
Status ClassifiedError(ErrorClass error_class, std::string source, std::string code,
                       std::string message);

// The ErrorDetail of `status`, or nullptr when it has none.
const ErrorDetail* GetErrorDetail(const Status& status);

// The class of an error: its ErrorDetail's when present; otherwise IOError is retriable,
// everything else fatal. Must not be called on an OK status.
ErrorClass ClassOf(const Status& status);

// Prefixes the message with where the error happened ("dataset events, partition 3: ...")
// and keeps the detail, so context is added as an error crosses a layer.
Status WithContext(const Status& status, std::string_view context);

}  // namespace weir
