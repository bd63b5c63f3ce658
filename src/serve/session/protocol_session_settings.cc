// ProtocolSession: SET / RESET / RESET ALL of PostgreSQL's settings, SHOW of the server's own
// (statement_timeout, idle_session_timeout), DISCARD, and the ParameterStatus reports.
#include <fmt/format.h>

#include "serve/compat/statement_kind.h"
#include "serve/session/protocol_session_internal.h"

namespace weir::serve {

using pgwire::ErrorFields;
using pgwire::MessageWriter;

OutputSettings ProtocolSession::Output() const {
  return OutputSettings{&settings_.time_zone(), settings_.extra_float_digits()};
}

void ProtocolSession::SyncOptions() {
  options_.statement_timeout = std::chrono::milliseconds(settings_.Millis("statement_timeout"));
  options_.idle_session_timeout =
      std::chrono::milliseconds(settings_.Millis("idle_session_timeout"));
  options_.application = settings_.Get("application_name");
}

void ProtocolSession::ReportSettings(MessageWriter& writer) {
  for (const auto& [name, value] : settings_.TakeReports()) writer.ParameterStatus(name, value);
}

void ProtocolSession::AppendWarnings() {
  if (options_.activity == nullptr) return;
  MessageWriter writer;
  for (const std::string& warning : options_.activity->TakeWarnings(options_.pid)) {
    writer.NoticeResponse(ErrorFields{"WARNING", "01000", warning, "", "", 0});
  }
  out_ += writer.Take();
}

void ProtocolSession::AfterStatement(char before, const std::string& statement,
                                     const Status& status) {
  const char after = session_->transaction_status();
  AppendWarnings();
  if (options_.activity != nullptr) {
    options_.activity->Finished(options_.pid, after, settings_.Get("application_name"));
  }
  if (before == 'I' || after != 'I') return;
  const bool committed =
      before == 'T' && status.ok() &&
      compat::TransactionControlOf(statement) == compat::TransactionControl::kCommit;
  settings_.EndTransaction(committed);
  SyncOptions();
}

Status ProtocolSession::Setting(const SettingCommand& setting, bool send_rows) {
  MessageWriter writer;
  const char status = session_->transaction_status();
  if (status == 'E') {
    return SqlError("25P02",
                    "current transaction is aborted, commands ignored until end of transaction "
                    "block");
  }
  const bool in_transaction = status == 'T';
  if (setting.kind == SettingCommand::Kind::kShow) {
    if (send_rows) writer.RowDescription({{setting.name, 0, 0, 25, -1, -1, 0}});
    const std::string value = settings_.Get(setting.name);
    writer.DataRow({std::optional<std::string_view>(value)});
    writer.CommandComplete("SHOW");
    out_ += writer.Take();
    return Status::OK();
  }
  if (setting.local && !in_transaction) {
    // PostgreSQL 15: a warning, and nothing changes.
    writer.NoticeResponse(ErrorFields{
        "WARNING", "25P01",
        setting.assignments.empty() ? "SET LOCAL can only be used in transaction blocks"
                                    : "SET TRANSACTION can only be used in transaction blocks",
        "", "", 0});
  }
  switch (setting.kind) {
    case SettingCommand::Kind::kSet:
      for (const auto& [name, value] : setting.assignments) {
        WEIR_RETURN_NOT_OK(settings_.Set(name, {value}, setting.local, in_transaction));
      }
      if (setting.assignments.empty()) {
        WEIR_RETURN_NOT_OK(settings_.Set(setting.name, setting.values, setting.local,
                                         in_transaction, setting.quoted));
      }
      break;
    case SettingCommand::Kind::kReset:
      WEIR_RETURN_NOT_OK(settings_.Reset(setting.name, setting.local, in_transaction));
      break;
    case SettingCommand::Kind::kResetAll:
      settings_.ResetAll(in_transaction);
      break;
    case SettingCommand::Kind::kShow:
      break;
  }
  SyncOptions();
  writer.CommandComplete(setting.reset_tag ? "RESET" : "SET");
  out_ += writer.Take();
  return Status::OK();
}

Status ProtocolSession::Savepoint(const SavepointCommand& savepoint) {
  const char status = session_->transaction_status();
  const char* what = savepoint.release ? "RELEASE SAVEPOINT" : "SAVEPOINT";
  if (status == 'I') {
    return SqlError("25P01", fmt::format("{} can only be used in transaction blocks", what));
  }
  if (status == 'E') {
    return SqlError("25P02",
                    "current transaction is aborted, commands ignored until end of transaction "
                    "block");
  }
  MessageWriter writer;
  writer.CommandComplete(savepoint.release ? "RELEASE" : "SAVEPOINT");
  out_ += writer.Take();
  return Status::OK();
}

// DISCARD ALL is PostgreSQL's: CLOSE ALL (every portal and cursor, held ones too), RESET ALL,
// DEALLOCATE ALL, DISCARD TEMP (the session's temporary tables, views, sequences and macros),
// DISCARD PLANS; not inside a transaction block.
Status ProtocolSession::Discard(const DiscardCommand& discard, Portal* extended) {
  using Target = DiscardCommand::Target;
  const char* tag = "DISCARD ALL";
  switch (discard.target) {
    case Target::kAll: {
      if (session_->transaction_status() != 'I') {
        return SqlError("25001", "DISCARD ALL cannot run inside a transaction block");
      }
      // The portal running this very DISCARD (extended protocol) is kept until it completes.
      std::erase_if(portals_, [&](const auto& entry) { return entry.second.get() != extended; });
      CloseAllStatements();
      settings_.ResetAll(false);
      SyncOptions();
      WEIR_RETURN_NOT_OK(session_->DiscardTemporary());
      session_->DiscardPlans();
      break;
    }
    case Target::kPlans:
      tag = "DISCARD PLANS";
      session_->DiscardPlans();
      break;
    case Target::kSequences:
      tag = "DISCARD SEQUENCES";  // no sequence caches to forget
      break;
    case Target::kTemp:
      tag = "DISCARD TEMP";
      WEIR_RETURN_NOT_OK(session_->DiscardTemporary());
      break;
  }
  MessageWriter writer;
  writer.CommandComplete(tag);
  out_ += writer.Take();
  return Status::OK();
}

}  // namespace weir::serve
