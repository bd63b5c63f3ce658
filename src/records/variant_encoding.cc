#include "records/variant_encoding.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "base/byte_order.h"

namespace weir::records {
namespace {

namespace od = simdjson::ondemand;

constexpr uint8_t kBasicPrimitive = 0;
constexpr uint8_t kBasicShortString = 1;
constexpr uint8_t kBasicObject = 2;
constexpr uint8_t kBasicArray = 3;

}  // namespace

// Not file-local: VariantEncoder::Impl, a class of the header, holds them.
namespace variant_nodes {

enum class Kind : uint8_t {
  kNull,
  kTrue,
  kFalse,
  kInt,
  kDecimal,
  kDouble,
  kString,
  kObject,
  kArray
};

// The document flattened in pre-order: a container is followed by its children (an object's
// children carry their key), `end` is the index after its subtree.
struct Node {
  Kind kind = Kind::kNull;
  uint32_t key = 0;  // provisional key id (first-seen order) of an object member
  uint32_t end = 0;
  uint32_t count = 0;  // children of a container
  int64_t i = 0;
  uint64_t u = 0;  // kDecimal: the unsigned value
  double d = 0;
  std::string_view s;
};

}  // namespace variant_nodes

namespace {

using variant_nodes::Kind;
using variant_nodes::Node;

uint8_t PrimitiveHeader(VariantPrimitive p) {
  return static_cast<uint8_t>(static_cast<uint8_t>(p) << 2 | kBasicPrimitive);
}

}  // namespace

struct VariantEncoder::Impl {
  od::parser parser;
  simdjson::padded_string_view padded;
  std::string copy;  // the text with simdjson's padding, when it cannot be read in place
  std::vector<Node> nodes;
  std::vector<std::string_view> keys;  // provisional id → key
  std::vector<uint32_t> sorted_id;     // provisional id → id in the sorted dictionary
  // Per depth (a deque: growing it keeps the references of shallower depths valid).
  std::deque<std::string> scratch;
  std::deque<std::vector<std::pair<uint32_t, uint32_t>>> members;
  std::deque<std::vector<uint64_t>> offsets;

  // Key → provisional id; the views point into the parser's string buffer.
  std::unordered_map<std::string_view, uint32_t> key_ids;

  uint32_t Intern(std::string_view key) {
    auto [it, inserted] = key_ids.try_emplace(key, static_cast<uint32_t>(keys.size()));
    if (inserted) keys.push_back(key);
    return it->second;
  }

  template <typename V>
  simdjson::error_code Number(V& v, Node& node) {
    od::number_type type;
    if (auto e = v.get_number_type().get(type); e) return e;
    switch (type) {
      case od::number_type::signed_integer:
        node.kind = Kind::kInt;
        return v.get_int64().get(node.i);
      case od::number_type::unsigned_integer: {
        uint64_t u = 0;
        if (auto e = v.get_uint64().get(u); e) return e;
        if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          node.kind = Kind::kInt;
          node.i = static_cast<int64_t>(u);
        } else {
          node.kind = Kind::kDecimal;
          node.u = u;
        }
        return simdjson::SUCCESS;
      }
      case od::number_type::floating_point_number:
      case od::number_type::big_integer: {
        node.kind = Kind::kDouble;
        if (type == od::number_type::floating_point_number && v.get_double().get(node.d) == 0) {
          return simdjson::SUCCESS;
        }
        // Beyond double's range (1e400) or a big integer: strtod's rounding (±inf), as DuckDB.
        std::string_view raw;
        auto raw_token = v.raw_json_token();  // a view of a value, a result of a document
        if constexpr (std::is_same_v<decltype(raw_token), std::string_view>) {
          raw = raw_token;
        } else if (auto e = std::move(raw_token).get(raw); e) {
          return e;
        }
        const std::string text(raw);
        node.d = std::strtod(text.c_str(), nullptr);
        return simdjson::SUCCESS;
      }
    }
    return simdjson::NUMBER_ERROR;
  }

  // Appends the scalar `v` (a document or a value) as one node.
  template <typename V>
  simdjson::error_code Scalar(V& v, od::json_type type, uint32_t key) {
    Node node;
    node.key = key;
    simdjson::error_code e = simdjson::SUCCESS;
    switch (type) {
      case od::json_type::null: {
        bool is_null = false;
        e = v.is_null().get(is_null);
        if (!e && !is_null) e = simdjson::N_ATOM_ERROR;
        node.kind = Kind::kNull;
        break;
      }
      case od::json_type::boolean: {
        bool b = false;
        e = v.get_bool().get(b);
        node.kind = b ? Kind::kTrue : Kind::kFalse;
        break;
      }
      case od::json_type::number:
        e = Number(v, node);
        break;
      case od::json_type::string:
        node.kind = Kind::kString;
        e = v.get_string().get(node.s);
        break;
      default:
        e = simdjson::INCORRECT_TYPE;
    }
    node.end = static_cast<uint32_t>(nodes.size() + 1);
    nodes.push_back(node);
    return e;
  }

  simdjson::error_code Value(od::value v, uint32_t key) {
    od::json_type type;
    if (auto e = v.type().get(type); e) return e;
    if (type == od::json_type::object) {
      od::object object;
      if (auto e = v.get_object().get(object); e) return e;
      return Object(object, key);
    }
    if (type == od::json_type::array) {
      od::array array;
      if (auto e = v.get_array().get(array); e) return e;
      return Array(array, key);
    }
    return Scalar(v, type, key);
  }

  simdjson::error_code Object(od::object object, uint32_t key) {
    const size_t at = nodes.size();
    Node head;
    head.kind = Kind::kObject;
    head.key = key;
    nodes.push_back(head);
    uint32_t count = 0;
    for (auto field : object) {
      std::string_view name;
      if (auto e = field.unescaped_key().get(name); e) return e;
      const uint32_t id = Intern(name);
      od::value child;
      if (auto e = field.value().get(child); e) return e;
      if (auto e = Value(child, id); e) return e;
      ++count;
    }
    nodes[at].count = count;
    nodes[at].end = static_cast<uint32_t>(nodes.size());
    return simdjson::SUCCESS;
  }

  simdjson::error_code Array(od::array array, uint32_t key) {
    const size_t at = nodes.size();
    Node head;
    head.kind = Kind::kArray;
    head.key = key;
    nodes.push_back(head);
    uint32_t count = 0;
    for (auto element : array) {
      od::value v;
      if (auto e = element.get(v); e) return e;
      if (auto e = Value(v, 0); e) return e;
      ++count;
    }
    nodes[at].count = count;
    nodes[at].end = static_cast<uint32_t>(nodes.size());
    return simdjson::SUCCESS;
  }

  void Metadata(std::string& out) {
    std::vector<uint32_t> order(keys.size());
    for (uint32_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
    sorted_id.assign(keys.size(), 0);
    uint64_t bytes = 0;
    for (uint32_t k = 0; k < order.size(); ++k) {
      sorted_id[order[k]] = k;
      bytes += keys[order[k]].size();
    }
    const int size = VariantFieldBytes(std::max<uint64_t>(bytes, keys.size()));
    out.clear();
    out.push_back(static_cast<char>(0x01 | 0x10 | ((size - 1) << 6)));  // version 1, sorted
    PutLittleEndian(out, keys.size(), size);
    uint64_t offset = 0;
    PutLittleEndian(out, 0, size);
    for (uint32_t k : order) {
      offset += keys[k].size();
      PutLittleEndian(out, offset, size);
    }
    for (uint32_t k : order) out.append(keys[k]);
  }

  // Writes the node at `index` (and its subtree) to `out`.
  void Write(uint32_t index, size_t depth, std::string& out) {
    const Node& node = nodes[index];
    switch (node.kind) {
      case Kind::kNull:
        out.push_back(static_cast<char>(PrimitiveHeader(VariantPrimitive::kNull)));
        return;
      case Kind::kTrue:
        out.push_back(static_cast<char>(PrimitiveHeader(VariantPrimitive::kTrue)));
        return;
      case Kind::kFalse:
        out.push_back(static_cast<char>(PrimitiveHeader(VariantPrimitive::kFalse)));
        return;
      case Kind::kInt: {
        const int64_t v = node.i;
        auto put = [&](VariantPrimitive p, int bytes) {
          out.push_back(static_cast<char>(PrimitiveHeader(p)));
          PutLittleEndian(out, static_cast<uint64_t>(v), bytes);
        };
        if (v >= INT8_MIN && v <= INT8_MAX) return put(VariantPrimitive::kInt8, 1);
        if (v >= INT16_MIN && v <= INT16_MAX) return put(VariantPrimitive::kInt16, 2);
        if (v >= INT32_MIN && v <= INT32_MAX) return put(VariantPrimitive::kInt32, 4);
        return put(VariantPrimitive::kInt64, 8);
      }
      case Kind::kDecimal:
        out.push_back(static_cast<char>(PrimitiveHeader(VariantPrimitive::kDecimal16)));
        out.push_back(0);  // scale
        PutLittleEndian(out, node.u, 8);
        PutLittleEndian(out, 0, 8);  // the high half of a positive 128-bit value
        return;
      case Kind::kDouble: {
        out.push_back(static_cast<char>(PrimitiveHeader(VariantPrimitive::kDouble)));
        uint64_t bits = 0;
        std::memcpy(&bits, &node.d, sizeof bits);
        PutLittleEndian(out, bits, 8);
        return;
      }
      case Kind::kString:
        if (node.s.size() < 64) {
          out.push_back(static_cast<char>(node.s.size() << 2 | kBasicShortString));
        } else {
          out.push_back(static_cast<char>(PrimitiveHeader(VariantPrimitive::kString)));
          PutLittleEndian(out, node.s.size(), 4);
        }
        out.append(node.s);
        return;
      case Kind::kObject:
      case Kind::kArray:
        return Container(index, depth, out);
    }
  }

  void Container(uint32_t index, size_t depth, std::string& out) {
    const Node& node = nodes[index];
    const bool object = node.kind == Kind::kObject;
    if (scratch.size() <= depth) {
      scratch.resize(depth + 1);
      members.resize(depth + 1);
      offsets.resize(depth + 1);
    }
    auto& list = members[depth];
    list.clear();
    for (uint32_t child = index + 1; child < node.end; child = nodes[child].end) {
      list.emplace_back(object ? sorted_id[nodes[child].key] : 0, child);
    }
    if (object) {
      // Field ids in key order; of a repeated key the last value.
      std::stable_sort(list.begin(), list.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      size_t kept = 0;
      for (size_t m = 0; m < list.size(); ++m) {
        if (m + 1 < list.size() && list[m + 1].first == list[m].first) continue;
        list[kept++] = list[m];
      }
      list.resize(kept);
    }
    std::string& values = scratch[depth];
    values.clear();
    auto& starts = offsets[depth];
    starts.clear();
    uint32_t max_id = 0;
    for (const auto& [id, child] : list) {
      starts.push_back(values.size());
      max_id = std::max(max_id, id);
      Write(child, depth + 1, values);  // grandchildren use the next depth's scratch
    }
    starts.push_back(values.size());
    const size_t n = list.size();
    const bool large = n > 0xFF;
    const int offset_size = VariantFieldBytes(values.size());
    if (object) {
      const int id_size = VariantFieldBytes(max_id);
      const uint8_t header =
          static_cast<uint8_t>((large ? 1 : 0) << 4 | (id_size - 1) << 2 | (offset_size - 1));
      out.push_back(static_cast<char>(header << 2 | kBasicObject));
      PutLittleEndian(out, n, large ? 4 : 1);
      for (const auto& member : list) PutLittleEndian(out, member.first, id_size);
    } else {
      const uint8_t header = static_cast<uint8_t>((large ? 1 : 0) << 2 | (offset_size - 1));
      out.push_back(static_cast<char>(header << 2 | kBasicArray));
      PutLittleEndian(out, n, large ? 4 : 1);
    }
    for (uint64_t offset : starts) PutLittleEndian(out, offset, offset_size);
    out.append(values);
  }
};

VariantEncoder::VariantEncoder() : impl_(new Impl) {}
VariantEncoder::~VariantEncoder() { delete impl_; }

Status VariantEncoder::Encode(std::string_view json, VariantBytes* out) {
  Impl& s = *impl_;
  s.nodes.clear();
  s.keys.clear();
  s.key_ids.clear();
  // A scalar document is read as the one element of an array, so that every scalar, those
  // read from their raw token too, is checked for trailing content the same way.
  bool wrapped = false;
  const auto first = json.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && json[first] != '{' && json[first] != '[') {
    wrapped = true;
    s.copy.assign("[");
    s.copy.append(json);
    s.copy.append("]");
  } else {
    s.copy.assign(json);
  }
  const size_t length = s.copy.size();
  s.copy.resize(length + simdjson::SIMDJSON_PADDING);
  od::document doc;
  auto fail = [&](simdjson::error_code e) {
    return Status::Invalid("not a JSON value (", simdjson::error_message(e), ")");
  };
  if (auto e = s.parser.iterate(s.copy.data(), length, s.copy.size()).get(doc); e) {
    return fail(e);
  }
  od::value root;
  simdjson::error_code e = doc.get_value().get(root);
  if (!e) e = s.Value(root, 0);
  if (e) return fail(e);
  if (!doc.at_end()) return Status::Invalid("not a JSON value (trailing content)");
  if (wrapped && (s.nodes.size() != 2 || s.nodes[0].count != 1)) {
    return Status::Invalid("not a JSON value (trailing content)");
  }
  s.Metadata(out->metadata);
  out->value.clear();
  s.Write(wrapped ? 1 : 0, 0, out->value);
  return Status::OK();
}

std::string_view EmptyVariantMetadata() {
  static const char kBytes[] = {0x11, 0x00, 0x00};
  return std::string_view(kBytes, sizeof kBytes);
}

}  // namespace weir::records
