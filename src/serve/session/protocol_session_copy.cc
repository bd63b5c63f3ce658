// ProtocolSession: COPY FROM STDIN and TO STDOUT.
#include <fmt/format.h>

#include "serve/session/copy_codec.h"
#include "serve/session/protocol_session_internal.h"

namespace weir::serve {

using pgwire::MessageWriter;

// COPY FROM STDIN and TO STDOUT: the copy sub-protocol of a simple query.

Status ProtocolSession::CopyOut(const CopyCommand& copy) {
  Portal portal;
  WEIR_RETURN_NOT_OK(StartStream(portal, session_->Query(copy.query)));
  std::vector<std::string> names;
  for (const auto& column : portal.stream->columns()) names.push_back(column.name);
  CopyRowWriter rows(copy.options, &portal.encoders, names);
  const bool binary = copy.options.format == CopyFormat::kBinary;
  MessageWriter writer;
  writer.CopyOutResponse(binary, names.size());
  out_ += writer.Take();
  // Like PostgreSQL: a CSV header is its own message; the binary header goes out with the
  // first row (clients parse the signature and the first row from one message).
  std::string pending = rows.Header();
  if (!binary && !pending.empty()) {
    writer.CopyData(pending);
    out_ += writer.Take();
    pending.clear();
  }
  uint64_t count = 0;
  while (true) {
    WEIR_ASSIGN_OR_RAISE(auto chunk, portal.stream->Next());
    if (!chunk) break;
    const idx_t size = duckdb_data_chunk_get_size(chunk.get());
    for (size_t c = 0; c < portal.encoders.size(); ++c) {
      portal.encoders[c].Bind(duckdb_data_chunk_get_vector(chunk.get(), c));
    }
    for (idx_t r = 0; r < size; ++r) {
      // One CopyData per row, as PostgreSQL sends them.
      const size_t at = out_.size();
      out_.append("d\0\0\0\0", 5);
      if (!pending.empty()) {
        out_ += pending;
        pending.clear();
      }
      rows.AppendRow(r, out_);
      const auto length = static_cast<uint32_t>(out_.size() - at - 1);
      for (int i = 0; i < 4; ++i) {
        out_[at + 1 + i] = static_cast<char>((length >> (24 - 8 * i)) & 0xff);
      }
    }
    count += size;
    if (metrics_ != nullptr) metrics_->rows_sent.Increment(static_cast<double>(size));
    if (out_.size() >= kFlushBytes && !Flush()) {
      return SqlError("08006", "the client went away during COPY TO STDOUT");
    }
  }
  pending += rows.Trailer();
  if (!pending.empty()) writer.CopyData(pending);
  writer.CopyDone();
  command_rows_ = count;
  writer.CommandComplete(fmt::format("COPY {}", count));
  out_ += writer.Take();
  return Status::OK();
}

Status ProtocolSession::CopyIn(const CopyCommand& copy) {
  WEIR_ASSIGN_OR_RAISE(auto appender, session_->OpenAppender(copy.table, copy.columns));
  const size_t columns = appender->column_count();
  std::vector<uint32_t> oids;
  for (size_t c = 0; c < columns; ++c) {
    duckdb_logical_type type = appender->type(c);
    oids.push_back(PgTypeOf(type).oid);
  }
  const bool binary = copy.options.format == CopyFormat::kBinary;
  MessageWriter writer;
  writer.CopyInResponse(binary, columns);
  out_ += writer.Take();
  if (!Flush()) return SqlError("08006", "the client went away before COPY FROM STDIN");
  // The deadline does not run while the client is sending.
  Disarm();
  CopyRowReader reader(copy.options, session_->memory_limit());
  Status failed;
  std::vector<std::optional<std::string>> fields;
  std::vector<OwnedValue> row(columns);
  const auto drain = [&]() -> Status {
    while (failed.ok()) {
      auto next = reader.NextRow(fields);
      if (!next.ok()) return next.status();
      if (!*next) return Status::OK();
      if (fields.size() != columns) {
        return SqlError("22P04", fmt::format("COPY {}, line {}: {} (expected {} columns, got {})",
                                             copy.table, reader.line(),
                                             fields.size() > columns ? "extra data after last "
                                                                       "expected column"
                                                                     : "missing data for column",
                                             columns, fields.size()));
      }
      for (size_t c = 0; c < columns; ++c) {
        const std::optional<std::string_view> bytes =
            fields[c] ? std::optional<std::string_view>(*fields[c]) : std::nullopt;
        auto value = DecodeValue(
            bytes, binary ? 1 : 0, oids[c],
            fmt::format("COPY {}, line {}, column {}", copy.table, reader.line(), c + 1));
        if (!value.ok()) return value.status();
        row[c] = std::move(*value);
      }
      Status appended = appender->AppendRow(row);
      if (!appended.ok()) {
        return WithContext(appended, fmt::format("COPY {}, line {}", copy.table, reader.line()));
      }
    }
    return Status::OK();
  };
  bool client_done = false;
  while (!client_done) {
    auto frame = io_.read(std::chrono::milliseconds(0));
    if (!frame.ok()) return frame.status();
    if (!*frame) return SqlError("08006", "the client went away during COPY FROM STDIN");
    const pgwire::Frame& message = **frame;
    switch (message.type) {
      case 'd':
        if (failed.ok()) {
          reader.Feed(message.body);
          failed = drain();
          if (failed.ok() && reader.buffered() > session_->memory_limit()) {
            failed = SqlError("54000", "COPY row exceeds the session's memory limit");
          }
        }
        break;
      case 'c':
        client_done = true;
        if (failed.ok()) {
          reader.Finish();
          failed = drain();
        }
        break;
      case 'f': {
        auto fail = pgwire::ParseCopyFail(message.body);
        failed = SqlError("57014", "COPY from stdin failed: " +
                                       (fail.ok() ? fail->message : std::string("(no reason)")));
        client_done = true;
        break;
      }
      case 'H':
      case 'S':
        break;  // ignored during COPY, as PostgreSQL does
      default:
        failed = SqlError("08P01", fmt::format("unexpected message type '{}' during COPY from "
                                               "stdin",
                                               message.type));
        client_done = true;
    }
  }
  if (!failed.ok()) {
    appender.reset();
    session_->FailTransaction();
    return failed;
  }
  auto count = appender->Close();
  if (!count.ok()) {
    appender.reset();
    session_->FailTransaction();
    return count.status();
  }
  WEIR_RETURN_NOT_OK(session_->EndImplicitTransaction(true));
  command_rows_ = *count;
  writer.CommandComplete(fmt::format("COPY {}", *count));
  out_ += writer.Take();
  return Status::OK();
}

}  // namespace weir::serve
