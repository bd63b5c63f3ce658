#include "lake/iceberg/puffin.h"

#include <nlohmann/json.hpp>

namespace weir::lake::iceberg {
namespace {

void PutLe32(std::string& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}
uint32_t GetLe32(std::string_view in, size_t at) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= uint32_t{static_cast<uint8_t>(in[at + i])} << (8 * i);
  return value;
}

}  // namespace

std::string EncodePuffin(const std::vector<PuffinBlob>& blobs,
                         const std::map<std::string, std::string>& file_properties,
                         std::vector<PuffinBlobMetadata>& placed) {
  std::string out(kPuffinMagic);
  nlohmann::json described = nlohmann::json::array();
  placed.clear();
  for (const PuffinBlob& blob : blobs) {
    PuffinBlobMetadata where{blob.type,
                             blob.fields,
                             blob.snapshot_id,
                             blob.sequence_number,
                             static_cast<int64_t>(out.size()),
                             static_cast<int64_t>(blob.data.size()),
                             blob.properties};
    out += blob.data;
    described.push_back({{"type", where.type},
                         {"fields", where.fields},
                         {"snapshot-id", where.snapshot_id},
                         {"sequence-number", where.sequence_number},
                         {"offset", where.offset},
                         {"length", where.length},
                         {"properties", where.properties}});
    placed.push_back(std::move(where));
  }
  nlohmann::json footer = {{"blobs", std::move(described)}};
  if (!file_properties.empty()) footer["properties"] = file_properties;
  const std::string payload = footer.dump();
  out += kPuffinMagic;
  out += payload;
  PutLe32(out, static_cast<uint32_t>(payload.size()));
  PutLe32(out, 0);  // flags: the footer is not compressed
  out += kPuffinMagic;
  return out;
}

Result<std::vector<PuffinBlobMetadata>> ReadPuffinFooter(std::string_view file) {
  constexpr size_t kTail = 12;  // payload size, flags, magic
  if (file.size() < 2 * kPuffinMagic.size() + kTail || !file.starts_with(kPuffinMagic) ||
      !file.ends_with(kPuffinMagic)) {
    return Status::Invalid("not a Puffin file (magic PFA1 missing)");
  }
  const size_t payload_size = GetLe32(file, file.size() - kTail);
  const uint32_t flags = GetLe32(file, file.size() - 8);
  if (payload_size + kTail + 2 * kPuffinMagic.size() > file.size()) {
    return Status::Invalid("a Puffin footer of ", payload_size, " bytes in a file of ",
                           file.size());
  }
  if ((flags & 1) != 0) return Status::NotImplemented("a compressed Puffin footer");
  const size_t payload_at = file.size() - kTail - payload_size;
  if (file.substr(payload_at - kPuffinMagic.size(), kPuffinMagic.size()) != kPuffinMagic) {
    return Status::Invalid("a Puffin footer without its opening magic");
  }
  const auto footer = nlohmann::json::parse(file.substr(payload_at, payload_size), nullptr, false);
  if (footer.is_discarded() || !footer.is_object() || !footer.contains("blobs") ||
      !footer["blobs"].is_array()) {
    return Status::Invalid("a Puffin footer that is not a JSON object with blobs");
  }
  std::vector<PuffinBlobMetadata> out;
  try {
    for (const auto& blob : footer["blobs"]) {
      PuffinBlobMetadata m;
      m.type = blob.at("type").get<std::string>();
      m.fields = blob.at("fields").get<std::vector<int>>();
      m.snapshot_id = blob.at("snapshot-id").get<int64_t>();
      m.sequence_number = blob.at("sequence-number").get<int64_t>();
      m.offset = blob.at("offset").get<int64_t>();
      m.length = blob.at("length").get<int64_t>();
      if (blob.contains("properties")) {
        m.properties = blob["properties"].get<std::map<std::string, std::string>>();
      }
      if (m.offset < 0 || m.length < 0 ||
          static_cast<size_t>(m.offset + m.length) > payload_at - kPuffinMagic.size()) {
        return Status::Invalid("a Puffin blob at ", m.offset, " of ", m.length,
                               " bytes lies outside the blobs");
      }
      out.push_back(std::move(m));
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::Invalid("a Puffin footer's blob: ", e.what());
  }
  return out;
}

}  // namespace weir::lake::iceberg
