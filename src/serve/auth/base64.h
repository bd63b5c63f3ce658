// Standard base64 (RFC 4648 section 4, with padding) as SCRAM and PostgreSQL's verifier text
// use it. Decoding is strict: no whitespace, no line breaks, padding only at the end.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace weir::serve::auth {

// The padded base64 text of `bytes`.
std::string Base64Encode(std::string_view bytes);

// The bytes of padded base64 `text`; Invalid (unclassified, without echoing the input) when
// it is not canonical base64 of some bytes.
Result<std::string> Base64Decode(std::string_view text);

}  // namespace weir::serve::auth
