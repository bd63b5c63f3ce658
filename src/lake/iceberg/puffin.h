// Puffin files (format/puffin-spec.md), as far as Iceberg v3 deletion vectors need them: a file
// is the magic `PFA1`, the blobs, and a footer (magic, a UTF-8 JSON payload describing the
// blobs, the payload's size as a 4-byte little-endian int, 4 flag bytes, magic). weir writes
// uncompressed blobs and footers; the reader refuses a compressed footer.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace weir::lake::iceberg {

inline constexpr std::string_view kPuffinMagic = "PFA1";
inline constexpr std::string_view kDeletionVectorBlobType = "deletion-vector-v1";

struct PuffinBlob {
  std::string type;
  std::vector<int> fields;
  // -1 for deletion vectors: not known when the file is written (the spec's rule for Puffin v1).
  int64_t snapshot_id = -1;
  int64_t sequence_number = -1;
  std::map<std::string, std::string> properties;
  std::string data;  // the blob's bytes (uncompressed)
};

// A blob's place in a file, as the footer describes it.
struct PuffinBlobMetadata {
  std::string type;
  std::vector<int> fields;
  int64_t snapshot_id = -1;
  int64_t sequence_number = -1;
  int64_t offset = 0;  // from the file's start
  int64_t length = 0;
  std::map<std::string, std::string> properties;
};

// The bytes of a Puffin file holding `blobs` in order; `placed` gets each blob's metadata.
std::string EncodePuffin(const std::vector<PuffinBlob>& blobs,
                         const std::map<std::string, std::string>& file_properties,
                         std::vector<PuffinBlobMetadata>& placed);

// The blobs a Puffin file's footer describes (checks both magics and the footer's size).
Result<std::vector<PuffinBlobMetadata>> ReadPuffinFooter(std::string_view file);

}  // namespace weir::lake::iceberg
