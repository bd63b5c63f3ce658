// Fuzz target: pgwire framing and every frontend message parser (serve/pgwire/protocol.h).
//
// Input: byte 0 chooses the phase (bit 0: the stream starts with startup-phase packets, as a
// connection does, until a StartupMessage) and the size of the pieces the stream is fed in
// (bits 1-7: 1 to 128 bytes); the rest is the client's byte stream.
//
// Checks, besides the sanitizers: a stream cut into pieces yields the same frames and the same
// error as the stream fed whole; no frame exceeds the reader's limit; every parse error is a
// protocol violation (08P01, or 0A000 for an unsupported protocol version); a parsed Bind has
// as many values as it declared, and format codes that are 0 or 1; a backend message built
// from parsed fields reads back as one frame of the right length.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "serve/pgwire/protocol.h"

namespace pgwire = weir::serve::pgwire;

namespace {

constexpr size_t kMaxMessageBytes = 64 * 1024;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_pgwire: invariant broken: %s\n", what);
  std::abort();
}

std::string CodeOf(const weir::Status& status) {
  const weir::ErrorDetail* detail = weir::GetErrorDetail(status);
  return detail != nullptr ? detail->code() : "";
}

void ExpectViolation(const weir::Status& status, bool startup) {
  const std::string code = CodeOf(status);
  if (code == "08P01") return;
  if (startup && code == "0A000") return;
  Fail("a parse error that is not a protocol violation");
}

// What one pass over the stream produced: the frames, then the error that ended it (if any).
struct Pass {
  std::vector<pgwire::Frame> frames;
  std::string error;
};

Pass Frames(std::string_view stream, bool startup_first, size_t piece) {
  Pass pass;
  pgwire::FrameReader reader(pgwire::kMaxStartupPacketBytes);
  bool startup = startup_first;
  size_t fed = 0;
  while (true) {
    auto frame = startup ? reader.NextStartup() : reader.Next();
    if (!frame.ok()) {
      pass.error = frame.status().message();
      return pass;
    }
    if (!*frame) {
      if (fed == stream.size()) return pass;
      const size_t n = std::min(piece, stream.size() - fed);
      reader.Feed(stream.substr(fed, n));
      fed += n;
      continue;
    }
    if ((**frame).body.size() > (startup ? pgwire::kMaxStartupPacketBytes : kMaxMessageBytes)) {
      Fail("a frame over the reader's limit");
    }
    if (startup) {
      auto packet = pgwire::ParseStartupPacket((**frame).body);
      if (packet.ok() && std::holds_alternative<pgwire::StartupMessage>(*packet)) {
        startup = false;  // as after authentication: the session's (larger) limit
        reader.set_max_message_bytes(kMaxMessageBytes);
      }
    }
    pass.frames.push_back(std::move(**frame));
  }
}

void CheckBind(const pgwire::Bind& bind) {
  for (int16_t f : bind.parameter_formats) {
    if (f != 0 && f != 1) Fail("Bind: a parameter format that is neither 0 nor 1");
  }
  for (int16_t f : bind.result_formats) {
    if (f != 0 && f != 1) Fail("Bind: a result format that is neither 0 nor 1");
  }
  if (bind.parameter_formats.size() > 1 &&
      bind.parameter_formats.size() != bind.parameters.size()) {
    Fail("Bind: as many formats as parameters, or 0 or 1");
  }
  for (size_t i = 0; i < bind.parameters.size(); ++i) {
    const int16_t f = pgwire::FormatAt(bind.parameter_formats, i);
    if (f != 0 && f != 1) Fail("FormatAt: neither 0 nor 1");
  }
}

// A backend message round trip: what MessageWriter wrote is one frame of its declared length.
void RoundTrip(pgwire::MessageWriter& writer, char type) {
  const std::string bytes = writer.Take();
  pgwire::FrameReader reader(SIZE_MAX);
  reader.Feed(bytes);
  auto frame = reader.Next();
  if (!frame.ok() || !*frame || (**frame).type != type || reader.buffered() != 0) {
    Fail("a backend message that does not read back as one frame");
  }
}

void ParseAll(const pgwire::Frame& frame) {
  const std::string_view body = frame.body;
  // Every parser over every body: the type byte only picks which one the server would use.
  if (auto q = pgwire::ParseQuery(body); q.ok()) {
    pgwire::MessageWriter w;
    w.CommandComplete(q->sql);
    RoundTrip(w, 'C');
  } else {
    ExpectViolation(q.status(), false);
  }
  if (auto p = pgwire::ParseParse(body); p.ok()) {
    pgwire::MessageWriter w;
    w.ParameterDescription(p->parameter_types);
    RoundTrip(w, 't');
  } else {
    ExpectViolation(p.status(), false);
  }
  if (auto b = pgwire::ParseBind(body); b.ok()) {
    CheckBind(*b);
    std::vector<std::optional<std::string_view>> values;
    for (const auto& v : b->parameters) {
      values.push_back(v ? std::optional<std::string_view>(*v) : std::nullopt);
    }
    pgwire::MessageWriter w;
    w.DataRow(values);
    RoundTrip(w, 'D');
  } else {
    ExpectViolation(b.status(), false);
  }
  if (auto d = pgwire::ParseDescribe(body); d.ok()) {
    if (d->kind != 'S' && d->kind != 'P') Fail("Describe: kind neither S nor P");
  } else {
    ExpectViolation(d.status(), false);
  }
  if (auto e = pgwire::ParseExecute(body); !e.ok()) ExpectViolation(e.status(), false);
  if (auto c = pgwire::ParseClose(body); c.ok()) {
    if (c->kind != 'S' && c->kind != 'P') Fail("Close: kind neither S nor P");
  } else {
    ExpectViolation(c.status(), false);
  }
  if (auto s = pgwire::ParseSaslInitialResponse(body); s.ok()) {
    pgwire::MessageWriter w;
    w.AuthenticationSaslContinue(s->data.value_or(""));
    RoundTrip(w, 'R');
  } else {
    ExpectViolation(s.status(), false);
  }
  if (auto f = pgwire::ParseCopyFail(body); f.ok()) {
    pgwire::MessageWriter w;
    w.ErrorResponse(pgwire::ErrorFields{"ERROR", "57014", f->message, "", "", 0});
    RoundTrip(w, 'E');
  } else {
    ExpectViolation(f.status(), false);
  }
  if (auto s = pgwire::ParseStartupPacket(body); s.ok()) {
    if (const auto* m = std::get_if<pgwire::StartupMessage>(&*s)) {
      pgwire::MessageWriter w;
      for (const auto& [name, value] : m->parameters) w.ParameterStatus(name, value);
      if (!m->parameters.empty()) {
        pgwire::FrameReader reader(SIZE_MAX);
        reader.Feed(w.Take());
        size_t n = 0;
        while (true) {
          auto frame_back = reader.Next();
          if (!frame_back.ok()) Fail("ParameterStatus does not read back");
          if (!*frame_back) break;
          ++n;
        }
        if (n != m->parameters.size()) Fail("ParameterStatus: frames lost");
      }
    }
  } else {
    ExpectViolation(s.status(), true);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool startup_first = (data[0] & 1) != 0;
  const size_t piece = 1 + (data[0] >> 1);
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);

  const Pass whole = Frames(stream, startup_first, stream.size() + 1);
  const Pass pieces = Frames(stream, startup_first, piece);
  if (whole.error != pieces.error || whole.frames.size() != pieces.frames.size()) {
    Fail("the stream in pieces frames differently from the stream whole");
  }
  for (size_t i = 0; i < whole.frames.size(); ++i) {
    if (whole.frames[i].type != pieces.frames[i].type ||
        whole.frames[i].body != pieces.frames[i].body) {
      Fail("a frame differs between the stream in pieces and whole");
    }
    ParseAll(whole.frames[i]);
  }
  return 0;
}
