#include "serve/compat/parse_tree.h"

namespace weir::serve::compat {

std::string StringOf(const PgQuery__Node* node) {
  if (node != nullptr && node->node_case == PG_QUERY__NODE__NODE_STRING) {
    return node->string->sval;
  }
  return {};
}

std::vector<std::string> NamesOf(PgQuery__Node* const* nodes, size_t count) {
  std::vector<std::string> names;
  for (size_t i = 0; i < count; ++i) names.push_back(StringOf(nodes[i]));
  return names;
}

const char* StringConstant(const PgQuery__Node* node) {
  if (node == nullptr || node->node_case != PG_QUERY__NODE__NODE_A_CONST) return nullptr;
  const PgQuery__AConst* value = node->a_const;
  if (value->isnull || value->val_case != PG_QUERY__A__CONST__VAL_SVAL) return nullptr;
  return value->sval->sval;
}

int32_t StartOf(const ProtobufCMessage* message) {
  int32_t start = -1;
  const ProtobufCFieldDescriptor* location =
      protobuf_c_message_descriptor_get_field_by_name(message->descriptor, "location");
  if (location != nullptr && location->type == PROTOBUF_C_TYPE_INT32) {
    start = *reinterpret_cast<const int32_t*>(reinterpret_cast<const char*>(message) +
                                              location->offset);
  }
  ForEachChild(message, [&](const ProtobufCMessage* child) {
    const int32_t child_start = StartOf(child);
    if (child_start >= 0 && (start < 0 || child_start < start)) start = child_start;
  });
  return start;
}

}  // namespace weir::serve::compat
