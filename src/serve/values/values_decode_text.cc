// PostgreSQL's text format of a client's value: bytea, boolean and array literals are read
// here (malformed input is 22P02); other text becomes a VARCHAR value for DuckDB to cast,
// rewritten where DuckDB reads PostgreSQL's output differently (BC dates, "+" in intervals).
#include <fmt/format.h>

#include "serve/values/values_internal.h"

namespace weir::serve::values_internal {
namespace {

Status BadText(std::string_view what, std::string_view type_name, std::string_view text) {
  return ClassifiedError(
      ErrorClass::kBadData, "sqlstate", "22P02",
      fmt::format("{}: invalid input syntax for type {}: \"{}\"", what, type_name, text));
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x >= 'A' && x <= 'Z' ? x + 32 : x) == (y >= 'A' && y <= 'Z' ? y + 32 : y);
         });
}

inline bool IsHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

inline int HexValue(char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

// byteain: "\x" hex (whitespace allowed between pairs) or the escape format (\\ and \ooo).
Result<OwnedValue> DecodeByteaText(std::string_view text, std::string_view what) {
  std::string bytes;
  if (text.size() >= 2 && text[0] == '\\' && text[1] == 'x') {
    bytes.reserve((text.size() - 2) / 2);
    for (size_t i = 2; i < text.size();) {
      if (IsArraySpace(text[i])) {
        ++i;
        continue;
      }
      if (i + 1 >= text.size() || !IsHexDigit(text[i]) || !IsHexDigit(text[i + 1])) {
        return BadText(what, "bytea", text);
      }
      bytes += static_cast<char>(HexValue(text[i]) * 16 + HexValue(text[i + 1]));
      i += 2;
    }
  } else {
    bytes.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] != '\\') {
        bytes += text[i];
      } else if (i + 1 < text.size() && text[i + 1] == '\\') {
        bytes += '\\';
        ++i;
      } else if (i + 3 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '3' &&
                 text[i + 2] >= '0' && text[i + 2] <= '7' && text[i + 3] >= '0' &&
                 text[i + 3] <= '7') {
        bytes += static_cast<char>((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 +
                                   (text[i + 3] - '0'));
        i += 3;
      } else {
        return BadText(what, "bytea", text);
      }
    }
  }
  return OwnedValue(
      duckdb_create_blob(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

// boolin: t/true/y/yes/on/1 and f/false/n/no/off/0, any case, unique prefixes, spaces around.
Result<OwnedValue> DecodeBoolText(std::string_view text, std::string_view what) {
  std::string_view word = text;
  while (!word.empty() && IsArraySpace(word.front())) word.remove_prefix(1);
  while (!word.empty() && IsArraySpace(word.back())) word.remove_suffix(1);
  auto prefix_of = [&](std::string_view full, size_t min_len) {
    return word.size() >= min_len && word.size() <= full.size() &&
           EqualsIgnoreCase(word, full.substr(0, word.size()));
  };
  if (prefix_of("true", 1) || prefix_of("yes", 1) || prefix_of("on", 2) || word == "1") {
    return OwnedValue(duckdb_create_bool(true));
  }
  if (prefix_of("false", 1) || prefix_of("no", 1) || prefix_of("off", 2) || word == "0") {
    return OwnedValue(duckdb_create_bool(false));
  }
  return BadText(what, "boolean", text);
}

// PostgreSQL writes BC dates as "0044-03-15 BC" and "0044-03-15 13:04:05+00 BC"; DuckDB reads
// "0044-03-15 (BC)" and "0044-03-15 (BC) 13:04:05+00".
std::string DuckDbDateTimeText(std::string_view text) {
  std::string_view body = text;
  while (!body.empty() && IsArraySpace(body.back())) body.remove_suffix(1);
  if (body.size() < 3 || body[0] < '0' || body[0] > '9' ||
      !EqualsIgnoreCase(body.substr(body.size() - 2), "BC") ||
      !IsArraySpace(body[body.size() - 3])) {
    return std::string(text);
  }
  body.remove_suffix(3);
  while (!body.empty() && IsArraySpace(body.back())) body.remove_suffix(1);
  const size_t date_end = std::min(body.find_first_of(" T"), body.size());
  std::string result(body.substr(0, date_end));
  result += " (BC)";
  if (date_end < body.size() && body[date_end] == 'T') {
    result += ' ';
    result += body.substr(date_end + 1);
  } else {
    result += body.substr(date_end);
  }
  return result;
}

// PostgreSQL writes "+" before a field that follows a negative one ("-1 days +04:05:06");
// DuckDB's interval reader wants no sign there.
std::string DuckDbIntervalText(std::string_view text) {
  std::string result;
  result.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+' && (i == 0 || IsArraySpace(text[i - 1]))) continue;
    result += text[i];
  }
  return result;
}

}  // namespace

Result<OwnedValue> DecodeTextScalar(std::string_view text, const PgBaseType& type,
                                    std::string_view what) {
  switch (type.oid) {
    case 17:
      return DecodeByteaText(text, what);
    case 16:
      return DecodeBoolText(text, what);
    case 1082:
    case 1114:
    case 1184:
      return Varchar(DuckDbDateTimeText(text), what);
    case 1186:
      return Varchar(DuckDbIntervalText(text), what);
    default:
      return Varchar(text, what);
  }
}

namespace {

// array_in: "{a,"b c",NULL,{...}}", optionally after "[1:3]=" bounds; elements are decoded as
// `element` text, an unquoted NULL is NULL.
class ArrayTextParser {
 public:
  ArrayTextParser(std::string_view text, const PgBaseType& element, std::string_view what)
      : text_(text), element_(element), what_(what) {}

  Result<OwnedValue> Parse() {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '[') {
      const size_t equals = text_.find('=', pos_);
      if (equals == std::string_view::npos) return Malformed();
      pos_ = equals + 1;
      SkipSpace();
    }
    int depth = 0;
    WEIR_ASSIGN_OR_RAISE(OwnedValue value, ParseLevel(depth));
    SkipSpace();
    if (pos_ != text_.size()) return Malformed();
    return value;
  }

 private:
  Status Malformed() const {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "22P02",
                           fmt::format("{}: malformed array literal for type {}[]: \"{}\"", what_,
                                       element_.name, text_));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && IsArraySpace(text_[pos_])) ++pos_;
  }

  // One "{...}" level; `depth` is set to the number of levels below and including it.
  Result<OwnedValue> ParseLevel(int& depth) {
    if (pos_ >= text_.size() || text_[pos_] != '{') return Malformed();
    ++pos_;
    if (++nesting_ > kMaxArrayDims) return Malformed();
    std::vector<OwnedValue> items;
    int child_depth = -1;  // -1 unknown, 0 scalars, n sub-arrays of depth n
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
    } else {
      while (true) {
        SkipSpace();
        if (pos_ >= text_.size()) return Malformed();
        int item_depth = 0;
        if (text_[pos_] == '{') {
          WEIR_ASSIGN_OR_RAISE(OwnedValue sub, ParseLevel(item_depth));
          items.push_back(std::move(sub));
        } else {
          WEIR_ASSIGN_OR_RAISE(OwnedValue scalar, ParseScalar());
          items.push_back(std::move(scalar));
        }
        if (child_depth != -1 && child_depth != item_depth) return Malformed();
        child_depth = item_depth;
        SkipSpace();
        if (pos_ >= text_.size()) return Malformed();
        if (text_[pos_] == '}') {
          ++pos_;
          break;
        }
        if (text_[pos_] != ',') return Malformed();
        ++pos_;
      }
    }
    --nesting_;
    depth = std::max(child_depth, 0) + 1;
    lake::DuckDbLogicalType child_type(duckdb_create_logical_type(DecodedTypeId(element_, 0)));
    for (int d = 0; d < child_depth; ++d) {
      lake::DuckDbLogicalType list(duckdb_create_list_type(child_type.get()));
      std::swap(list, child_type);
    }
    std::vector<duckdb_value> raw;
    raw.reserve(items.size());
    for (const OwnedValue& item : items) raw.push_back(item.get());
    OwnedValue list(CreateList(child_type.get(), raw));
    if (!list) return Malformed();
    return list;
  }

  Result<OwnedValue> ParseScalar() {
    std::string item;
    bool quoted = false;
    bool escaped = false;
    size_t trailing_space = 0;  // unquoted trailing spaces are dropped
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (quoted) {
        ++pos_;
        if (c == '"') {
          quoted = false;
        } else if (c == '\\') {
          if (pos_ >= text_.size()) return Malformed();
          item += text_[pos_++];
        } else {
          item += c;
        }
        trailing_space = 0;
        escaped = true;
        continue;
      }
      if (c == ',' || c == '}') break;
      if (c == '{') return Malformed();
      ++pos_;
      if (c == '"') {
        quoted = true;
        escaped = true;
      } else if (c == '\\') {
        if (pos_ >= text_.size()) return Malformed();
        item += text_[pos_++];
        escaped = true;
        trailing_space = 0;
      } else {
        item += c;
        trailing_space = IsArraySpace(c) ? trailing_space + 1 : 0;
      }
    }
    if (quoted) return Malformed();
    item.resize(item.size() - trailing_space);
    if (!escaped && EqualsIgnoreCase(item, "NULL")) return NullValue();
    if (!escaped && item.empty()) return Malformed();
    return DecodeTextScalar(item, element_, what_);
  }

  std::string_view text_;
  const PgBaseType& element_;
  std::string_view what_;
  size_t pos_ = 0;
  int nesting_ = 0;
};

}  // namespace

Result<OwnedValue> DecodeTextArray(std::string_view text, const PgBaseType& element,
                                   std::string_view what) {
  return ArrayTextParser(text, element, what).Parse();
}

}  // namespace weir::serve::values_internal
