// Reading libpg_query's protobuf parse tree: names, constants, and a walk over any node's
// children through protobuf-c's descriptors (so one walk covers all of PostgreSQL's node
// types).
#pragma once

#include <pg_query/pg_query.pb-c.h>

#include <cstdint>
#include <string>
#include <vector>

namespace weir::serve::compat {

// The text of a String node ("" for anything else).
std::string StringOf(const PgQuery__Node* node);
// The texts of a list of String nodes (a qualified name).
std::vector<std::string> NamesOf(PgQuery__Node* const* nodes, size_t count);
// The string value of a constant ('...'), if `node` is one; nullptr otherwise.
const char* StringConstant(const PgQuery__Node* node);
// The smallest source location in the subtree of `message` (where its text starts), or -1.
int32_t StartOf(const ProtobufCMessage* message);

// The name PostgreSQL gives a result column computed by `expr` when the query gives none
// (its FigureColname): a column's or function's name, a cast's type name when its operand has
// none, "case", "coalesce", "exists", ..., and "?column?" for anything else (constants,
// operators). `strength` (optional) receives how sure the name is, as PostgreSQL ranks it:
// 2 a name of the expression itself, 1 a type name or "case", 0 "?column?".
std::string PgColumnName(const PgQuery__Node* expr, int* strength = nullptr);

// Calls `visit` on each message-typed child of `message` (set oneof members only).
template <typename Visit>
void ForEachChild(const ProtobufCMessage* message, Visit&& visit) {
  const ProtobufCMessageDescriptor* descriptor = message->descriptor;
  const char* base = reinterpret_cast<const char*>(message);
  for (unsigned i = 0; i < descriptor->n_fields; ++i) {
    const ProtobufCFieldDescriptor& field = descriptor->fields[i];
    if (field.type != PROTOBUF_C_TYPE_MESSAGE) continue;
    if ((field.flags & PROTOBUF_C_FIELD_FLAG_ONEOF) != 0 &&
        *reinterpret_cast<const uint32_t*>(base + field.quantifier_offset) != field.id) {
      continue;
    }
    if (field.label == PROTOBUF_C_LABEL_REPEATED) {
      const size_t count = *reinterpret_cast<const size_t*>(base + field.quantifier_offset);
      const auto* items = *reinterpret_cast<ProtobufCMessage* const* const*>(base + field.offset);
      for (size_t k = 0; k < count; ++k) visit(items[k]);
    } else if (const auto* child = *reinterpret_cast<ProtobufCMessage* const*>(base + field.offset);
               child != nullptr) {
      visit(child);
    }
  }
}

}  // namespace weir::serve::compat
