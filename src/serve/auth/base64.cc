#include "serve/auth/base64.h"

#include <openssl/evp.h>

#include <climits>

namespace weir::serve::auth {
namespace {

bool IsBase64Char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  if (bytes.empty()) return {};
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  // EVP_EncodeBlock writes a terminating NUL after the text, hence the extra byte.
  out.resize(out.size() + 1);
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                      reinterpret_cast<const unsigned char*>(bytes.data()),
                                      static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(written));
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) {
    return Status::Invalid("base64 text length ", text.size(), " is not a multiple of 4");
  }
  if (text.size() > INT_MAX / 2) return Status::Invalid("base64 text too long");
  // EVP_DecodeBlock skips surrounding whitespace, decodes '=' anywhere as zero bits and keeps
  // the padding's zero bytes in its output, so the shape is checked here first.
  size_t padding = 0;
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=') {
    ++padding;
  }
  for (size_t i = 0; i < text.size() - padding; ++i) {
    if (!IsBase64Char(text[i])) {
      return Status::Invalid("base64 text has an invalid character at offset ", i);
    }
  }
  if (text.empty()) return std::string();
  std::string out(text.size() / 4 * 3, '\0');
  const int written = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                      reinterpret_cast<const unsigned char*>(text.data()),
                                      static_cast<int>(text.size()));
  if (written < 0 || static_cast<size_t>(written) != out.size()) {
    return Status::Invalid("base64 text does not decode");
  }
  out.resize(out.size() - padding);
  return out;
}

}  // namespace weir::serve::auth
