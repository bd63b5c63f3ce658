#include "serve/auth/openssl_error.h"

#include <openssl/err.h>

#include <array>
#include <cstdio>
#include <string>

namespace weir::serve::auth {

Status OpenSslError(std::string_view what) {
  std::string code = "unknown";
  std::string message(what);
  bool first = true;
  while (const unsigned long error = ERR_get_error()) {
    std::array<char, 256> text{};
    ERR_error_string_n(error, text.data(), text.size());
    if (first) {
      std::array<char, 17> hex{};
      std::snprintf(hex.data(), hex.size(), "%08lX", error);
      code = hex.data();
    }
    message += first ? ": " : "; ";
    message += text.data();
    first = false;
  }
  return ClassifiedError(ErrorClass::kFatal, "openssl", std::move(code), std::move(message));
}

}  // namespace weir::serve::auth
