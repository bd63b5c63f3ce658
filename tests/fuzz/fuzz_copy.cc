// Fuzz target: COPY FROM STDIN's decoders, text, CSV and binary (serve/copy_codec.h).
//
// Input: byte 0 picks the format and options (kPresets), byte 1 the size of the CopyData
// messages the data arrives in (1 to 256 bytes), byte 2 bit 0 a small row limit (256 bytes)
// instead of 1 MiB; the rest is the COPY data.
//
// Checks, besides the sanitizers: the data in messages yields the same rows and the same error
// as the data in one message (and as the data fed byte by byte up to 4 KiB); every error is
// 22P04 or 54000; once the data is finished and no row is left, the reader is at its end (no
// bytes are dropped silently); no binary field exceeds the row limit.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "serve/session/copy_codec.h"

namespace serve = weir::serve;

namespace {

serve::CopyOptions Preset(uint8_t choice) {
  serve::CopyOptions o;
  switch (choice % 8) {
    case 0:  // text, PostgreSQL's defaults
      break;
    case 1:
      o.delimiter = ',';
      o.null_string = "NULL";
      break;
    case 2:
      o.delimiter = '|';
      o.null_string = "";
      break;
    case 3:  // CSV defaults
      o.format = serve::CopyFormat::kCsv;
      o.delimiter = ',';
      o.null_string = "";
      break;
    case 4:
      o.format = serve::CopyFormat::kCsv;
      o.delimiter = ',';
      o.null_string = "";
      o.header = true;
      break;
    case 5:  // an escape other than the quote
      o.format = serve::CopyFormat::kCsv;
      o.delimiter = ';';
      o.null_string = "NULL";
      o.quote = '\'';
      o.escape = '\\';
      break;
    case 6:
      o.format = serve::CopyFormat::kCsv;
      o.delimiter = '\t';
      o.null_string = "\\N";
      o.header = true;
      o.escape = '\\';
      break;
    default:
      o.format = serve::CopyFormat::kBinary;
      break;
  }
  return o;
}

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_copy: invariant broken: %s\n", what);
  std::abort();
}

struct Decoded {
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::string error;  // "" when none
  bool at_end = false;
};

Decoded Decode(const serve::CopyOptions& options, size_t max_row_bytes, std::string_view data,
               size_t piece) {
  Decoded out;
  serve::CopyRowReader reader(options, max_row_bytes);
  std::vector<std::optional<std::string>> fields;
  const auto drain = [&]() -> bool {
    while (true) {
      auto next = reader.NextRow(fields);
      if (!next.ok()) {
        const weir::ErrorDetail* detail = weir::GetErrorDetail(next.status());
        const std::string code = detail != nullptr ? detail->code() : "";
        if (code != "22P04" && code != "54000") Fail("an error that is neither 22P04 nor 54000");
        out.error = next.status().message();
        return false;
      }
      if (!*next) return true;
      if (options.format == serve::CopyFormat::kBinary) {
        for (const auto& f : fields) {
          if (f && f->size() > max_row_bytes) Fail("a binary field over the row limit");
        }
      }
      out.rows.push_back(fields);
    }
  };
  for (size_t at = 0; at < data.size(); at += piece) {
    reader.Feed(data.substr(at, piece));
    if (!drain()) return out;
  }
  reader.Finish();
  if (!drain()) return out;
  out.at_end = reader.at_end();
  if (!out.at_end) Fail("the data ended without an error, but the reader is not at its end");
  return out;
}

bool Same(const Decoded& a, const Decoded& b) {
  return a.rows == b.rows && a.error == b.error && a.at_end == b.at_end;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const serve::CopyOptions options = Preset(data[0]);
  const size_t piece = 1 + data[1];
  const size_t max_row_bytes = (data[2] & 1) != 0 ? 256 : 1 << 20;
  const std::string_view copy(reinterpret_cast<const char*>(data) + 3, size - 3);

  const Decoded whole = Decode(options, max_row_bytes, copy, copy.size() + 1);
  const Decoded pieces = Decode(options, max_row_bytes, copy, piece);
  if (!Same(whole, pieces)) Fail("the data in messages decodes differently from the data whole");
  if (copy.size() <= 4096) {
    const Decoded bytes = Decode(options, max_row_bytes, copy, 1);
    if (!Same(whole, bytes)) Fail("the data byte by byte decodes differently from the data whole");
  }
  return 0;
}
