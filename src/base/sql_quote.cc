#include "base/sql_quote.h"

namespace weir {
namespace {

std::string Quote(std::string_view text, char quote) {
  std::string out;
  out.reserve(text.size() + 2);
  out += quote;
  for (char c : text) {
    out += c;
    if (c == quote) out += quote;
  }
  out += quote;
  return out;
}

}  // namespace

std::string QuoteLiteral(std::string_view text) { return Quote(text, '\''); }

std::string QuoteIdentifier(std::string_view name) { return Quote(name, '"'); }

}  // namespace weir
