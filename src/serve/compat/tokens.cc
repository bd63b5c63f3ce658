#include "serve/compat/tokens.h"

#include <pg_query.h>

namespace weir::serve::compat {

std::optional<Tokens> Tokens::Scan(const std::string& sql) {
  PgQueryScanResult scan = pg_query_scan(sql.c_str());
  PgQuery__ScanResult* unpacked =
      scan.error != nullptr
          ? nullptr
          : pg_query__scan_result__unpack(nullptr, scan.pbuf.len,
                                          reinterpret_cast<const uint8_t*>(scan.pbuf.data));
  std::optional<Tokens> result;
  if (unpacked != nullptr) {
    std::vector<Token> tokens;
    tokens.reserve(unpacked->n_tokens);
    for (size_t i = 0; i < unpacked->n_tokens; ++i) {
      const PgQuery__ScanToken* t = unpacked->tokens[i];
      tokens.push_back({static_cast<size_t>(t->start), static_cast<size_t>(t->end), t->token,
                        t->keyword_kind != PG_QUERY__KEYWORD_KIND__NO_KEYWORD});
    }
    result = Tokens(sql, std::move(tokens));
    pg_query__scan_result__free_unpacked(unpacked, nullptr);
  }
  pg_query_free_scan_result(scan);
  return result;
}

std::string_view Tokens::Text(size_t i) const {
  return sql_.substr(tokens_[i].begin, tokens_[i].end - tokens_[i].begin);
}

std::optional<size_t> Tokens::IndexAt(size_t offset) const {
  size_t low = 0, high = tokens_.size();
  while (low < high) {
    const size_t mid = (low + high) / 2;
    if (tokens_[mid].begin < offset) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  if (low < tokens_.size() && tokens_[low].begin == offset) return low;
  return std::nullopt;
}

bool Tokens::IsNamePart(size_t i) const {
  return i < tokens_.size() && (tokens_[i].kind == PG_QUERY__TOKEN__IDENT || tokens_[i].keyword);
}

size_t Tokens::NameEnd(size_t first) const {
  size_t last = first;
  while (last + 1 < tokens_.size() && tokens_[last + 1].kind == PG_QUERY__TOKEN__ASCII_46 &&
         IsNamePart(last + 2)) {
    last += 2;
  }
  return last;
}

std::optional<size_t> Tokens::ClosingParen(size_t open) const {
  int depth = 0;
  for (size_t i = open; i < tokens_.size(); ++i) {
    if (tokens_[i].kind == PG_QUERY__TOKEN__ASCII_40) ++depth;
    if (tokens_[i].kind == PG_QUERY__TOKEN__ASCII_41 && --depth == 0) return i;
  }
  return std::nullopt;
}

}  // namespace weir::serve::compat
