#include "wal/segment_name.h"

#include <charconv>

namespace weir::wal {
namespace {

constexpr std::string_view kSuffix = ".parquet";

std::optional<int64_t> ParseNumber(std::string_view text) {
  if (text.empty() || text.size() > 19) return std::nullopt;
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  // No sign, no leading zeros (so a name has exactly one spelling).
  if (text.size() > 1 && text[0] == '0') return std::nullopt;
  return value;
}

// Splits off the last '_'-separated field of `rest`.
std::optional<std::string_view> PopField(std::string_view& rest) {
  const size_t at = rest.rfind('_');
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view field = rest.substr(at + 1);
  rest = rest.substr(0, at);
  return field;
}

}  // namespace

std::string_view ToString(SegmentState state) {
  return state == SegmentState::kActive ? "active" : "ready";
}

std::string SegmentName::FileName() const {
  std::string name = state == SegmentState::kActive ? "active_" : "ready_";
  name += topic + "_" + std::to_string(partition) + "_" + std::to_string(start);
  if (state == SegmentState::kReady) name += "-" + std::to_string(end);
  name += "_" + id.ToString() + std::string(kSuffix);
  return name;
}

SegmentName SegmentName::Ready(int64_t last_offset) const {
  SegmentName ready = *this;
  ready.state = SegmentState::kReady;
  ready.end = last_offset;
  return ready;
}

std::optional<SegmentName> ParseSegmentName(std::string_view file_name) {
  if (file_name.size() <= kSuffix.size() ||
      file_name.substr(file_name.size() - kSuffix.size()) != kSuffix) {
    return std::nullopt;
  }
  std::string_view rest = file_name.substr(0, file_name.size() - kSuffix.size());
  SegmentName name;
  if (rest.starts_with("active_")) {
    name.state = SegmentState::kActive;
    rest.remove_prefix(7);
  } else if (rest.starts_with("ready_")) {
    name.state = SegmentState::kReady;
    rest.remove_prefix(6);
  } else {
    return std::nullopt;
  }
  const auto id = PopField(rest);
  if (!id || id->size() != 36) return std::nullopt;
  const auto uuid = Uuid::TryParse(*id);
  if (!uuid) return std::nullopt;
  name.id = *uuid;
  const auto range = PopField(rest);
  if (!range) return std::nullopt;
  if (name.state == SegmentState::kActive) {
    const auto start = ParseNumber(*range);
    if (!start) return std::nullopt;
    name.start = *start;
  } else {
    const size_t dash = range->find('-');
    if (dash == std::string_view::npos) return std::nullopt;
    const auto start = ParseNumber(range->substr(0, dash));
    const auto end = ParseNumber(range->substr(dash + 1));
    if (!start || !end || *end < *start) return std::nullopt;
    name.start = *start;
    name.end = *end;
  }
  const auto partition = PopField(rest);
  if (!partition) return std::nullopt;
  const auto number = ParseNumber(*partition);
  if (!number || *number > INT32_MAX) return std::nullopt;
  name.partition = static_cast<int32_t>(*number);
  if (rest.empty()) return std::nullopt;
  name.topic = std::string(rest);
  // The canonical spelling only (upper-case uuid digits would name the same file twice).
  if (name.FileName() != file_name) return std::nullopt;
  return name;
}

}  // namespace weir::wal
