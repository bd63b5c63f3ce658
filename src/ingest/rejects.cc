#include "ingest/rejects.h"

#include <arrow/builder.h>
#include <fmt/format.h>

#include "base/clock.h"
#include "files/parquet_file_writer.h"
#include "kafka/consumer.h"

namespace weir::ingest {
namespace {

// Length of the valid UTF-8 sequence starting at `s[i]`, or 0 when it is not one.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0;
  if ((c & 0xE0) == 0xC0) {
    n = 2, cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  const bool overlong = (n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

std::vector<std::pair<std::string, lake::ColumnType>> RejectsColumns() {
  using lake::ColumnType;
  return {{"topic", ColumnType::kVarchar},          {"partition", ColumnType::kBigint},
          {"offset", ColumnType::kBigint},          {"key", ColumnType::kVarchar},
          {"payload", ColumnType::kVarchar},        {"payload_bytes", ColumnType::kBigint},
          {"reason", ColumnType::kVarchar},         {"error", ColumnType::kVarchar},
          {"received_at", ColumnType::kTimestampTz}};
}

RejectRecord MakeReject(const kafka::Message& message, std::string_view reason, const Status& error,
                        size_t payload_limit) {
  RejectRecord reject;
  reject.topic = std::string(message.topic);
  reject.partition = message.partition;
  reject.offset = message.offset;
  if (!message.key_is_null) reject.key = SafeText(message.key, payload_limit);
  reject.payload = SafeText(message.payload, payload_limit);
  reject.payload_bytes = static_cast<int64_t>(message.payload.size());
  reject.reason = std::string(reason);
  reject.error = error.message();
  reject.received_at_us = UnixMicros(Clock::System().Now());
  return reject;
}

std::string SafeText(std::string_view bytes, size_t limit) {
  std::string out;
  out.reserve(std::min(bytes.size(), limit));
  for (size_t i = 0; i < bytes.size();) {
    const size_t n = Utf8SequenceLength(bytes, i);
    if (n == 0) {
      const std::string escape = fmt::format("\\x{:02X}", static_cast<unsigned char>(bytes[i]));
      if (out.size() + escape.size() > limit) break;
      out += escape;
      i += 1;
    } else {
      if (out.size() + n > limit) break;
      out.append(bytes.substr(i, n));
      i += n;
    }
  }
  return out;
}

Result<std::shared_ptr<arrow::RecordBatch>> RejectsBatch(const std::vector<RejectRecord>& rejects,
                                                         const std::vector<lake::Column>& table) {
  arrow::StringBuilder topic, key, payload, reason, error;
  arrow::Int64Builder partition, offset, payload_bytes;
  arrow::TimestampBuilder received(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                                   arrow::default_memory_pool());
  for (const auto& r : rejects) {
    WEIR_RETURN_NOT_OK(topic.Append(r.topic));
    WEIR_RETURN_NOT_OK(partition.Append(r.partition));
    WEIR_RETURN_NOT_OK(offset.Append(r.offset));
    WEIR_RETURN_NOT_OK(r.key ? key.Append(*r.key) : key.AppendNull());
    WEIR_RETURN_NOT_OK(payload.Append(r.payload));
    WEIR_RETURN_NOT_OK(payload_bytes.Append(r.payload_bytes));
    WEIR_RETURN_NOT_OK(reason.Append(r.reason));
    WEIR_RETURN_NOT_OK(error.Append(r.error));
    WEIR_RETURN_NOT_OK(received.Append(r.received_at_us));
  }
  std::map<std::string, std::shared_ptr<arrow::Array>> by_name;
  WEIR_ASSIGN_OR_RAISE(by_name["topic"], topic.Finish());
  WEIR_ASSIGN_OR_RAISE(by_name["partition"], partition.Finish());
  WEIR_ASSIGN_OR_RAISE(by_name["offset"], offset.Finish());
  WEIR_ASSIGN_OR_RAISE(by_name["key"], key.Finish());
  WEIR_ASSIGN_OR_RAISE(by_name["payload"], payload.Finish());
  WEIR_ASSIGN_OR_RAISE(by_name["payload_bytes"], payload_bytes.Finish());
  WEIR_ASSIGN_OR_RAISE(by_name["reason"], reason.Finish());
  WEIR_ASSIGN_OR_RAISE(by_name["error"], error.Finish());
  WEIR_ASSIGN_OR_RAISE(by_name["received_at"], received.Finish());
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<std::shared_ptr<arrow::Array>> arrays;
  std::vector<int> ids;
  for (const auto& column : table) {
    auto found = by_name.find(column.name);
    if (found == by_name.end()) continue;
    fields.push_back(arrow::field(column.name, found->second->type()));
    arrays.push_back(found->second);
    ids.push_back(static_cast<int>(column.id));
  }
  WEIR_ASSIGN_OR_RAISE(auto schema, files::WithFieldIds(*arrow::schema(fields), ids));
  return arrow::RecordBatch::Make(schema, static_cast<int64_t>(rejects.size()), arrays);
}

RejectsCommitPlan PlanRejectsCommit(const std::vector<RejectRecord>& rejects,
                                    const std::vector<lake::OffsetRange>& flush_offsets,
                                    const TopicLedgers& rejects_ledger) {
  RejectsCommitPlan plan;
  const auto ledger_of = [&](const std::string& topic,
                             int32_t partition) -> std::optional<int64_t> {
    const auto t = rejects_ledger.find(topic);
    if (t == rejects_ledger.end()) return std::nullopt;
    const auto p = t->second.find(partition);
    if (p == t->second.end()) return std::nullopt;
    return p->second;
  };
  for (const auto& range : flush_offsets) {
    const auto next = ledger_of(range.topic, range.partition);
    if (next && *next >= range.end) continue;  // every offset of the flush is accounted for
    plan.offsets.push_back({range.topic, range.partition, next.value_or(range.start), range.end});
    if (next && *next < range.start) plan.needs_data_ledger.push_back(range);
  }
  for (const auto& reject : rejects) {
    const auto next = ledger_of(reject.topic, reject.partition);
    if (!next || reject.offset >= *next) plan.rejects.push_back(reject);
  }
  return plan;
}

}  // namespace weir::ingest
