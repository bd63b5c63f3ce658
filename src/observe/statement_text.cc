#include "observe/statement_text.h"

namespace weir::observe {
namespace {

bool IsIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || static_cast<unsigned char>(c) >= 0x80;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// Where the single-quoted literal starting at sql[at] (the quote) ends, one past its closing
// quote (or the end). `backslashes`: an E'' literal, where \' does not end it.
size_t SkipQuoted(std::string_view sql, size_t at, bool backslashes) {
  size_t i = at + 1;
  while (i < sql.size()) {
    if (backslashes && sql[i] == '\\') {
      i += 2;
    } else if (sql[i] == '\'') {
      if (i + 1 < sql.size() && sql[i + 1] == '\'') {
        i += 2;
      } else {
        return i + 1;
      }
    } else {
      ++i;
    }
  }
  return sql.size();
}

// The tag of a dollar quote at sql[at] ("$$" or "$tag$"), or npos length when it is not one.
size_t DollarTagLength(std::string_view sql, size_t at) {
  size_t i = at + 1;
  if (i < sql.size() && IsDigit(sql[i])) return std::string_view::npos;  // $1: a parameter
  while (i < sql.size() && sql[i] != '$') {
    if (!IsIdentChar(sql[i]) || sql[i] == '$') return std::string_view::npos;
    ++i;
  }
  return i < sql.size() ? i - at + 1 : std::string_view::npos;
}

// The display text being built: at most kStatementDisplayChars characters (UTF-8 code points);
// `full` once a character did not fit.
struct BoundedText {
  std::string out;
  size_t chars = 0;
  bool full = false;

  void Put(char c) {
    if (full) return;
    const bool continuation = (static_cast<unsigned char>(c) & 0xC0) == 0x80;
    if (!continuation) {
      if (chars == kStatementDisplayChars) {
        full = true;
        return;
      }
      ++chars;
    }
    out += c;
  }
  void Space() {
    if (!out.empty() && out.back() != ' ') Put(' ');
  }
};

}  // namespace

std::string DisplayStatement(std::string_view sql) {
  BoundedText text;
  size_t i = 0;
  while (i < sql.size() && !text.full) {
    const char c = sql[i];
    const bool after_ident = i > 0 && IsIdentChar(sql[i - 1]);
    if (IsSpace(c)) {
      text.Space();
      ++i;
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      while (i < sql.size() && sql[i] != '\n') ++i;
      text.Space();
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      int depth = 0;
      while (i < sql.size()) {
        if (sql.compare(i, 2, "/*") == 0) {
          ++depth;
          i += 2;
        } else if (sql.compare(i, 2, "*/") == 0) {
          i += 2;
          if (--depth == 0) break;
        } else {
          ++i;
        }
      }
      text.Space();
    } else if (c == '\'') {
      // A prefix letter (E'', B'', X'', N'') belongs to the literal.
      bool backslashes = false;
      if (!text.out.empty() && i > 0 && (i < 2 || !IsIdentChar(sql[i - 2]))) {
        const char prefix = sql[i - 1];
        if (prefix == 'E' || prefix == 'e' || prefix == 'B' || prefix == 'b' || prefix == 'X' ||
            prefix == 'x' || prefix == 'N' || prefix == 'n') {
          backslashes = prefix == 'E' || prefix == 'e';
          text.out.pop_back();
          --text.chars;
        }
      }
      i = SkipQuoted(sql, i, backslashes);
      text.Put('?');
    } else if (c == '"') {
      // A quoted identifier: kept.
      text.Put(c);
      ++i;
      while (i < sql.size()) {
        text.Put(sql[i]);
        if (sql[i] == '"') {
          if (i + 1 < sql.size() && sql[i + 1] == '"') {
            text.Put('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        ++i;
      }
    } else if (c == '$' && !after_ident && DollarTagLength(sql, i) != std::string_view::npos) {
      const std::string_view tag = sql.substr(i, DollarTagLength(sql, i));
      const size_t close = sql.find(tag, i + tag.size());
      i = close == std::string_view::npos ? sql.size() : close + tag.size();
      text.Put('?');
    } else if (!after_ident &&
               (IsDigit(c) || (c == '.' && i + 1 < sql.size() && IsDigit(sql[i + 1])))) {
      while (i < sql.size() &&
             (IsIdentChar(sql[i]) || sql[i] == '.' ||
              ((sql[i] == '+' || sql[i] == '-') && (sql[i - 1] == 'e' || sql[i - 1] == 'E')))) {
        ++i;
      }
      text.Put('?');
    } else {
      text.Put(c);
      ++i;
    }
  }
  std::string out = std::move(text.out);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (text.full) out += "…";
  return out;
}

}  // namespace weir::observe
