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

namespace {

// The last String node of `nodes` (a field name, not a star or a subscript) into `name`.
bool LastName(PgQuery__Node* const* nodes, size_t count, std::string& name) {
  for (size_t i = count; i > 0; --i) {
    if (nodes[i - 1]->node_case == PG_QUERY__NODE__NODE_STRING) {
      name = StringOf(nodes[i - 1]);
      return true;
    }
  }
  return false;
}

// PostgreSQL's FigureColnameInternal over the raw parse tree: sets `name` when the node gives
// one and returns its strength (0 when it gives none).
int FigureColname(const PgQuery__Node* node, std::string& name) {
  if (node == nullptr) return 0;
  switch (node->node_case) {
    case PG_QUERY__NODE__NODE_COLUMN_REF:
      // The last field that is a name (a star gives none).
      return LastName(node->column_ref->fields, node->column_ref->n_fields, name) ? 2 : 0;
    case PG_QUERY__NODE__NODE_A_INDIRECTION: {
      const PgQuery__AIndirection* ind = node->a_indirection;
      if (LastName(ind->indirection, ind->n_indirection, name)) return 2;
      return FigureColname(ind->arg, name);
    }
    case PG_QUERY__NODE__NODE_FUNC_CALL: {
      const PgQuery__FuncCall* call = node->func_call;
      if (call->n_funcname == 0) return 0;
      name = StringOf(call->funcname[call->n_funcname - 1]);
      return 2;
    }
    case PG_QUERY__NODE__NODE_A_EXPR:
      if (node->a_expr->kind == PG_QUERY__A__EXPR__KIND__AEXPR_NULLIF) {
        name = "nullif";
        return 2;
      }
      return 0;
    case PG_QUERY__NODE__NODE_TYPE_CAST: {
      const int strength = FigureColname(node->type_cast->arg, name);
      if (strength > 1) return strength;
      const PgQuery__TypeName* type = node->type_cast->type_name;
      if (type == nullptr || type->n_names == 0) return strength;
      name = StringOf(type->names[type->n_names - 1]);
      return 1;
    }
    case PG_QUERY__NODE__NODE_COLLATE_CLAUSE:
      return FigureColname(node->collate_clause->arg, name);
    case PG_QUERY__NODE__NODE_GROUPING_FUNC:
      name = "grouping";
      return 2;
    case PG_QUERY__NODE__NODE_SUB_LINK:
      switch (node->sub_link->sub_link_type) {
        case PG_QUERY__SUB_LINK_TYPE__EXISTS_SUBLINK:
          name = "exists";
          return 2;
        case PG_QUERY__SUB_LINK_TYPE__ARRAY_SUBLINK:
          name = "array";
          return 2;
        case PG_QUERY__SUB_LINK_TYPE__EXPR_SUBLINK: {
          // The subquery's single column's name.
          const PgQuery__Node* sub = node->sub_link->subselect;
          if (sub == nullptr || sub->node_case != PG_QUERY__NODE__NODE_SELECT_STMT) return 0;
          const PgQuery__SelectStmt* select = sub->select_stmt;
          while (select->larg != nullptr) select = select->larg;
          if (select->n_target_list == 0 ||
              select->target_list[0]->node_case != PG_QUERY__NODE__NODE_RES_TARGET) {
            return 0;
          }
          const PgQuery__ResTarget* target = select->target_list[0]->res_target;
          name = target->name != nullptr && *target->name != '\0' ? std::string(target->name)
                                                                  : PgColumnName(target->val);
          return 2;
        }
        default:
          return 0;
      }
    case PG_QUERY__NODE__NODE_CASE_EXPR: {
      const int strength = FigureColname(node->case_expr->defresult, name);
      if (strength > 1) return strength;
      name = "case";
      return 1;
    }
    case PG_QUERY__NODE__NODE_A_ARRAY_EXPR:
      name = "array";
      return 2;
    case PG_QUERY__NODE__NODE_ROW_EXPR:
      name = "row";
      return 2;
    case PG_QUERY__NODE__NODE_COALESCE_EXPR:
      name = "coalesce";
      return 2;
    case PG_QUERY__NODE__NODE_MIN_MAX_EXPR:
      name = node->min_max_expr->op == PG_QUERY__MIN_MAX_OP__IS_GREATEST ? "greatest" : "least";
      return 2;
    case PG_QUERY__NODE__NODE_SQLVALUE_FUNCTION:
      switch (node->sqlvalue_function->op) {
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_DATE:
          name = "current_date";
          return 2;
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_TIME:
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_TIME_N:
          name = "current_time";
          return 2;
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_TIMESTAMP:
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_TIMESTAMP_N:
          name = "current_timestamp";
          return 2;
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_LOCALTIME:
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_LOCALTIME_N:
          name = "localtime";
          return 2;
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_LOCALTIMESTAMP:
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_LOCALTIMESTAMP_N:
          name = "localtimestamp";
          return 2;
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_ROLE:
          name = "current_role";
          return 2;
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_USER:
          name = "current_user";
          return 2;
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_USER:
          name = "user";
          return 2;
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_SESSION_USER:
          name = "session_user";
          return 2;
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_CATALOG:
          name = "current_catalog";
          return 2;
        case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_SCHEMA:
          name = "current_schema";
          return 2;
        default:
          return 0;
      }
    case PG_QUERY__NODE__NODE_XML_SERIALIZE:
      name = "xmlserialize";
      return 2;
    default:
      return 0;
  }
}

}  // namespace

std::string PgColumnName(const PgQuery__Node* expr, int* strength) {
  std::string name;
  const int found = FigureColname(expr, name);
  if (strength != nullptr) *strength = found;
  return found > 0 ? name : "?column?";
}

}  // namespace weir::serve::compat
