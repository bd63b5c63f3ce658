// ProtocolSession: the extended query protocol (Parse, Bind, Describe, Execute, Close).
#include <limits>

#include <fmt/format.h>

#include "serve/session/protocol_session_internal.h"

namespace weir::serve {

using pgwire::MessageWriter;

Status ProtocolSession::HandleExtended(const pgwire::Frame& message) {
  MessageWriter writer;
  switch (message.type) {
    case 'P': {
      WEIR_ASSIGN_OR_RAISE(auto parse, pgwire::ParseParse(message.body));
      WEIR_ASSIGN_OR_RAISE(auto command, RecognizeCommand(parse.query));
      command_statements_.erase(parse.statement);
      if (auto* declare = std::get_if<DeclareCommand>(&command)) {
        // The cursor's query is prepared under the statement's name, for its parameters.
        WEIR_RETURN_NOT_OK(session_->Prepare(parse.statement, declare->query).status());
        command_statements_[parse.statement] = std::move(command);
      } else if (!std::holds_alternative<std::monostate>(command)) {
        session_->ClosePrepared(parse.statement);
        command_statements_[parse.statement] = std::move(command);
      } else {
        WEIR_RETURN_NOT_OK(session_->Prepare(parse.statement, parse.query).status());
      }
      declared_types_[parse.statement] = parse.parameter_types;
      statement_text_[parse.statement] = parse.query;
      writer.ParseComplete();
      break;
    }
    case 'B': {
      WEIR_ASSIGN_OR_RAISE(auto bind, pgwire::ParseBind(message.body));
      WEIR_RETURN_NOT_OK(Bind(bind));
      writer.BindComplete();
      break;
    }
    case 'D': {
      WEIR_ASSIGN_OR_RAISE(auto describe, pgwire::ParseDescribe(message.body));
      if (describe.kind == 'P') return DescribePortal(describe.name);
      auto command = command_statements_.find(describe.name);
      if (command != command_statements_.end() &&
          !std::holds_alternative<DeclareCommand>(command->second)) {
        writer.ParameterDescription({});
        writer.NoData();
        break;
      }
      WEIR_ASSIGN_OR_RAISE(auto info, session_->Describe(describe.name));
      writer.ParameterDescription(info.parameter_types);
      if (info.columns.empty() || command != command_statements_.end()) {
        writer.NoData();
      } else {
        std::vector<pgwire::FieldDescription> fields;
        for (const auto& c : info.columns) {
          fields.push_back({c.name, 0, 0, c.type.oid, c.type.size, c.type.modifier, 0});
        }
        writer.RowDescription(fields);
      }
      break;
    }
    case 'E': {
      WEIR_ASSIGN_OR_RAISE(auto execute, pgwire::ParseExecute(message.body));
      return Execute(execute);
    }
    case 'C': {
      WEIR_ASSIGN_OR_RAISE(auto close, pgwire::ParseClose(message.body));
      if (close.kind == 'S') {
        session_->ClosePrepared(close.name);
        command_statements_.erase(close.name);
        declared_types_.erase(close.name);
        statement_text_.erase(close.name);
      } else {
        portals_.erase(close.name);
      }
      writer.CloseComplete();
      break;
    }
    default:
      return pgwire::ProtocolViolation(fmt::format("unknown message type '{}'", message.type));
  }
  out_ += writer.Take();
  return Status::OK();
}

Status ProtocolSession::Bind(const pgwire::Bind& bind) {
  auto portal = std::make_unique<Portal>();
  portal->statement = bind.statement;
  portal->result_formats = bind.result_formats;
  auto command = command_statements_.find(bind.statement);
  const bool declare = command != command_statements_.end() &&
                       std::holds_alternative<DeclareCommand>(command->second);
  if (command != command_statements_.end()) portal->command = command->second;
  if (command == command_statements_.end() || declare) {
    WEIR_ASSIGN_OR_RAISE(auto info, session_->Describe(bind.statement));
    const auto& declared = declared_types_[bind.statement];
    for (size_t i = 0; i < bind.parameters.size(); ++i) {
      // The type the client declared in Parse wins (it says how binary values are laid out).
      uint32_t oid = i < info.parameter_types.size() ? info.parameter_types[i] : 25;
      if (i < declared.size() && declared[i] != 0) oid = declared[i];
      const auto& value = bind.parameters[i];
      WEIR_ASSIGN_OR_RAISE(
          auto decoded, DecodeValue(value ? std::optional<std::string_view>(*value) : std::nullopt,
                                    pgwire::FormatAt(bind.parameter_formats, i), oid,
                                    fmt::format("parameter ${}", i + 1)));
      portal->parameters.push_back(std::move(decoded));
    }
  } else if (!bind.parameters.empty()) {
    return SqlError("08P01", "this statement takes no parameters");
  }
  portal->parameters_bound = declare;
  if (auto old = portals_.find(bind.portal); old != portals_.end() && old->second->cursor) {
    return SqlError("42P03", fmt::format("cursor \"{}\" already exists", bind.portal));
  }
  portals_[bind.portal] = std::move(portal);
  return Status::OK();
}

Status ProtocolSession::DescribePortal(const std::string& name) {
  auto found = portals_.find(name);
  if (found == portals_.end()) {
    return SqlError("34000", fmt::format("portal \"{}\" does not exist", name));
  }
  Portal& portal = *found->second;
  MessageWriter writer;
  if (portal.command) {
    // FETCH describes the cursor it reads; other commands return no rows.
    const auto* fetch = std::get_if<FetchCommand>(&*portal.command);
    auto cursor = fetch != nullptr && !fetch->move ? portals_.find(fetch->name) : portals_.end();
    if (cursor != portals_.end() && cursor->second->stream) {
      Portal& source = *cursor->second;
      std::vector<pgwire::FieldDescription> fields;
      const auto& columns = source.stream->columns();
      for (size_t c = 0; c < columns.size(); ++c) {
        const bool binary =
            pgwire::FormatAt(portal.result_formats, c) == 1 && columns[c].has_binary;
        fields.push_back({columns[c].name, 0, 0, columns[c].type.oid, columns[c].type.size,
                          columns[c].type.modifier, binary ? int16_t{1} : int16_t{0}});
      }
      writer.RowDescription(fields);
    } else {
      writer.NoData();
    }
    out_ += writer.Take();
    return Status::OK();
  }
  std::vector<ResultColumn> columns;
  if (!portal.stream) {
    WEIR_ASSIGN_OR_RAISE(auto info, session_->Describe(portal.statement));
    if (!info.columns.empty()) {
      // A query's columns are only certain once its parameters are bound (DuckDB cannot type
      // `$1 * 2` before it has a value), so a query portal starts here; Execute streams it.
      if (options_.activity != nullptr) {
        options_.activity->Started(options_.pid, statement_text_[portal.statement],
                                   session_->transaction_status() != 'I');
      }
      Arm();
      Status started = StartStream(portal, session_->Execute(portal.statement, portal.parameters));
      Disarm();
      WEIR_RETURN_NOT_OK(Classify(started));
    }
  }
  if (portal.stream) columns = portal.stream->columns();
  if (columns.empty()) {
    writer.NoData();
  } else {
    std::vector<pgwire::FieldDescription> fields;
    for (size_t c = 0; c < columns.size(); ++c) {
      const bool binary = pgwire::FormatAt(portal.result_formats, c) == 1 && columns[c].has_binary;
      fields.push_back({columns[c].name, 0, 0, columns[c].type.oid, columns[c].type.size,
                        columns[c].type.modifier, binary ? int16_t{1} : int16_t{0}});
    }
    writer.RowDescription(fields);
  }
  out_ += writer.Take();
  return Status::OK();
}

Status ProtocolSession::Execute(const pgwire::Execute& execute) {
  auto found = portals_.find(execute.portal);
  if (found == portals_.end()) {
    return SqlError("34000", fmt::format("portal \"{}\" does not exist", execute.portal));
  }
  Portal& portal = *found->second;
  const std::string text = statement_text_[portal.statement];
  const char before = session_->transaction_status();
  if (options_.activity != nullptr) options_.activity->Started(options_.pid, text, before != 'I');
  if (portal.command) {
    Arm();
    // A FETCH through the extended protocol: rows go out in the portal's formats.
    Status status;
    if (auto* fetch = std::get_if<FetchCommand>(&*portal.command)) {
      auto cursor = portals_.find(fetch->name);
      if (cursor != portals_.end() && cursor->second->cursor && cursor->second->stream) {
        Portal& source = *cursor->second;
        for (size_t c = 0; c < source.binary.size(); ++c) {
          source.binary[c] = pgwire::FormatAt(portal.result_formats, c) == 1 &&
                             source.stream->columns()[c].has_binary;
        }
      }
    }
    Command command = *portal.command;
    command_rows_ = 0;
    status = RunCommand(command, &portal);
    Disarm();
    status = Classify(status);
    AfterStatement(before, text, status);
    LogQuery(text, status, command_rows_);
    return status;
  }
  if (portal.done) {
    MessageWriter writer;
    writer.CommandComplete(portal.stream ? portal.stream->CommandTag() : "SELECT 0");
    out_ += writer.Take();
    AfterStatement(before, text, Status::OK());
    return Status::OK();
  }
  if (!portal.stream && AnswerTransactionNoOp(text)) {
    // As in a simple query: a COMMIT outside a block or a BEGIN inside one is a warning.
    portal.done = true;
    AfterStatement(before, text, Status::OK());
    LogQuery(text, Status::OK(), 0);
    return Status::OK();
  }
  Arm();
  Status status;
  bool finished = false;
  if (!portal.stream)
    status = StartStream(portal, session_->Execute(portal.statement, portal.parameters));
  if (status.ok()) {
    const uint64_t limit = execute.max_rows > 0 ? static_cast<uint64_t>(execute.max_rows)
                                                : std::numeric_limits<uint64_t>::max();
    auto done = Pump(portal, limit);
    status = done.status();
    finished = status.ok() && *done;
  }
  Disarm();
  status = Classify(status);
  AfterStatement(before, text, status);
  if (!status.ok()) {
    LogQuery(text, status, portal.stream ? portal.stream->rows() : 0);
    portals_.erase(found);
    return status;
  }
  MessageWriter writer;
  if (finished) {
    AppendWarnings();
    portal.done = true;
    writer.CommandComplete(portal.stream->CommandTag());
    LogQuery(text, status, portal.stream->rows());
  } else {
    writer.PortalSuspended();
  }
  out_ += writer.Take();
  return Status::OK();
}

}  // namespace weir::serve
