// OpenSSL's error queue as a classified Status (internal to serve/auth).
#pragma once

#include <string_view>

#include "base/status.h"

namespace weir::serve::auth {

// ClassifiedError(kFatal, "openssl", <first queued error code, 8 hex digits>, "<what>: <all
// queued error texts>"), clearing the queue.
Status OpenSslError(std::string_view what);

}  // namespace weir::serve::auth
