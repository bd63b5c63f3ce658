// The fuzzers' oracle for what the server writes: checks that a byte stream is a well-formed
// sequence of backend messages (protocol 3.0), so a session that answers with a broken message
// (a NUL inside a string, a count that wrapped, a field count that disagrees with its
// RowDescription) fails the fuzz run instead of confusing a client.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace weir::fuzz {

class BackendStream {
 public:
  // Whether DataRows must match the last RowDescription (true while a simple Query runs, where
  // every result set is described before its rows).
  void set_described_rows(bool described) {
    described_rows_ = described;
    columns_.reset();
  }

  // Appends bytes the server wrote; aborts with a message at the first malformed message.
  void Feed(std::string_view bytes) {
    buffer_.append(bytes);
    size_t at = 0;
    while (buffer_.size() - at >= 5) {
      const char type = buffer_[at];
      const uint32_t length = U32(buffer_.data() + at + 1);
      if (length < 4) Fail(type, "a length under 4");
      if (buffer_.size() - at - 1 < length) break;
      Check(type, std::string_view(buffer_).substr(at + 5, length - 4));
      at += 1 + length;
    }
    buffer_.erase(0, at);
  }
  uint64_t messages() const { return messages_; }
  // Prints every message (type, length, its first bytes) to stderr, to read a reproducer.
  void set_trace(bool trace) { trace_ = trace; }

 private:
  [[noreturn]] static void Fail(char type, const char* what) {
    std::fprintf(stderr, "backend stream: malformed '%c' message: %s\n", type, what);
    std::abort();
  }
  static uint32_t U32(const char* p) {
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
  }
  static int16_t I16(const char* p) {
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    return static_cast<int16_t>((u[0] << 8) | u[1]);
  }
  // Whether `s` is UTF-8 (decoded code point by code point: no overlong forms, surrogates or
  // values past U+10FFFF), as every string of a server whose encoding is UTF8 must be.
  static bool IsUtf8(std::string_view s) {
    size_t i = 0;
    while (i < s.size()) {
      const auto c = static_cast<unsigned char>(s[i]);
      const int extra = c < 0x80         ? 0
                        : (c >> 5) == 6  ? 1
                        : (c >> 4) == 14 ? 2
                        : (c >> 3) == 30 ? 3
                                         : -1;
      if (extra < 0 || i + static_cast<size_t>(extra) >= s.size()) return false;
      uint32_t cp = extra == 0 ? c : c & (0x3f >> extra);
      for (int k = 1; k <= extra; ++k) {
        const auto t = static_cast<unsigned char>(s[i + k]);
        if ((t & 0xc0) != 0x80) return false;
        cp = (cp << 6) | (t & 0x3f);
      }
      static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
      if (cp < kMin[extra] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
      i += 1 + static_cast<size_t>(extra);
    }
    return true;
  }
  // A NUL-terminated UTF-8 string at `at`; returns the offset after it.
  static size_t CString(char type, std::string_view body, size_t at) {
    const size_t end = body.find('\0', at);
    if (end == std::string_view::npos) Fail(type, "a string without its NUL");
    if (!IsUtf8(body.substr(at, end - at))) Fail(type, "a string that is not UTF-8");
    return end + 1;
  }

  void Check(char type, std::string_view body) {
    ++messages_;
    if (trace_) {
      std::string shown;
      for (char c : body.substr(0, 160)) shown += (c >= 32 && c < 127) ? c : '.';
      std::fprintf(stderr, "< %c %zu %s\n", type, body.size(), shown.c_str());
    }
    switch (type) {
      case 'Z':
        if (body.size() != 1 || std::string_view("ITE").find(body[0]) == std::string_view::npos) {
          Fail(type, "ReadyForQuery's status is not I, T or E");
        }
        columns_.reset();
        return;
      case 'C':
      case 'S': {
        size_t at = CString(type, body, 0);
        if (type == 'S') at = CString(type, body, at);
        if (at != body.size()) Fail(type, "bytes after its strings (a NUL inside one)");
        return;
      }
      case 'E':
      case 'N': {
        size_t at = 0;
        bool code = false, message = false;
        while (true) {
          if (at >= body.size()) Fail(type, "no terminating field");
          const char field = body[at++];
          if (field == '\0') break;
          const size_t end = CString(type, body, at);
          const std::string_view value = body.substr(at, end - at - 1);
          if (field == 'C') {
            code = true;
            if (value.size() != 5) Fail(type, "a SQLSTATE that is not 5 characters");
            for (char c : value) {
              if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z'))) Fail(type, "SQLSTATE");
            }
          }
          if (field == 'M') message = true;
          if (std::string_view("SVCMDHP").find(field) == std::string_view::npos) {
            Fail(type, "an unknown field code (a NUL inside a field)");
          }
          at = end;
        }
        if (at != body.size()) Fail(type, "bytes after the terminating field");
        if (!code || !message) Fail(type, "no SQLSTATE or no message");
        return;
      }
      case 'T': {
        if (body.size() < 2) Fail(type, "no field count");
        const int16_t n = I16(body.data());
        if (n < 0) Fail(type, "a negative field count");
        size_t at = 2;
        for (int16_t i = 0; i < n; ++i) {
          at = CString(type, body, at);
          if (body.size() - at < 18) Fail(type, "a field description runs past the end");
          const int16_t format = I16(body.data() + at + 16);
          if (format != 0 && format != 1) Fail(type, "a format that is neither 0 nor 1");
          at += 18;
        }
        if (at != body.size()) Fail(type, "bytes after the last field (the count wrapped?)");
        if (described_rows_) columns_ = n;
        return;
      }
      case 'D': {
        if (body.size() < 2) Fail(type, "no value count");
        const int16_t n = I16(body.data());
        if (n < 0) Fail(type, "a negative value count");
        size_t at = 2;
        for (int16_t i = 0; i < n; ++i) {
          if (body.size() - at < 4) Fail(type, "a value length runs past the end");
          const auto length = static_cast<int32_t>(U32(body.data() + at));
          at += 4;
          if (length < -1) Fail(type, "a length under -1");
          if (length > 0) {
            if (body.size() - at < static_cast<size_t>(length)) Fail(type, "a value too long");
            at += static_cast<size_t>(length);
          }
        }
        if (at != body.size()) Fail(type, "bytes after the last value");
        if (described_rows_ && (!columns_ || *columns_ != n)) {
          Fail(type, "a row whose width is not its RowDescription's");
        }
        return;
      }
      case 't': {
        if (body.size() < 2) Fail(type, "no count");
        const int16_t n = I16(body.data());
        if (n < 0 || body.size() != 2 + 4 * static_cast<size_t>(n)) Fail(type, "count");
        return;
      }
      case 'G':
      case 'H': {
        if (body.size() < 3 || (body[0] != 0 && body[0] != 1)) Fail(type, "overall format");
        const int16_t n = I16(body.data() + 1);
        if (n < 0 || body.size() != 3 + 2 * static_cast<size_t>(n)) Fail(type, "column count");
        for (int16_t i = 0; i < n; ++i) {
          if (I16(body.data() + 3 + 2 * i) != body[0]) Fail(type, "a column format");
        }
        return;
      }
      case 'K':
        if (body.size() != 8) Fail(type, "BackendKeyData is not 8 bytes");
        return;
      case 'R':
        if (body.size() < 4) Fail(type, "no authentication code");
        return;
      case '1':
      case '2':
      case '3':
      case 'n':
      case 's':
      case 'I':
      case 'c':
        if (!body.empty()) Fail(type, "a body where none belongs");
        return;
      case 'd':
        return;
      default:
        Fail(type, "an unknown message type");
    }
  }

  std::string buffer_;
  bool described_rows_ = false;
  std::optional<int16_t> columns_;
  uint64_t messages_ = 0;
  bool trace_ = false;
};

}  // namespace weir::fuzz
