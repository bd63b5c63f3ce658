// RewriteForDuckDb: PostgreSQL's parser finds the constructs DuckDB cannot run as a
// PostgreSQL client wrote them; each becomes a text edit at the token positions the parse tree
// gives, so everything else in the statement stays byte for byte as sent. A statement
// PostgreSQL cannot parse (DuckDB-native syntax) or that has nothing to change is returned as is.
#include <pg_query.h>
#include <pg_query/pg_query.pb-c.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "base/sql_quote.h"
#include "base/text.h"
#include "serve/compat/compat.h"
#include "serve/compat/names.h"
#include "serve/compat/parse_tree.h"
#include "serve/compat/session_statements.h"
#include "serve/compat/settings.h"
#include "serve/compat/tokens.h"

namespace weir::serve::compat {
namespace {

// Substrings (lower case) without which no rule can apply: statements without any are not
// scanned or parsed at all. (Every rule below must be reachable through one of them; the
// rewrite tests fail when one is not.)
constexpr std::string_view kTriggers[] = {
    // catalog relations and functions, public, session and transaction statements
    "pg_", "information_schema", "public", "current_", "user", "version", "format_", "_description",
    "array_", "reg", "schema", "privilege", "set", "show", "begin", "start", "savepoint", "release",
    "rollback",
    // operators and collations
    "operator", "collate", "~", "like",
    // types DuckDB lacks (DuckDbTypeFor), json_build_object
    "name", "json", "oid", "vector", "xid", "cid", "tid", "aclitem", "anyarray", "cstring", "xml",
    "inet", "macaddr", "money",
    // set-returning functions whose alias names their column
    "generate_s", "unnest", "every"};

bool MayNeedRewriting(const std::string& statement, ColumnNames names) {
  const std::string lower = ToLower(statement);
  // Result columns named as PostgreSQL names them (Rewriter::NameTargets).
  if (names == ColumnNames::kPostgres && lower.find("select") != std::string::npos) return true;
  return std::any_of(std::begin(kTriggers), std::end(kTriggers), [&](std::string_view trigger) {
    return lower.find(trigger) != std::string::npos;
  });
}

// PostgreSQL types DuckDB does not know, as the DuckDB type that holds their values.
std::string_view DuckDbTypeFor(std::string_view pg_type) {
  static constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
      {"name", "VARCHAR"},         {"jsonb", "JSON"},          {"xid", "BIGINT"},
      {"xid8", "BIGINT"},          {"cid", "BIGINT"},          {"tid", "VARCHAR"},
      {"oidvector", "VARCHAR"},    {"int2vector", "VARCHAR"},  {"aclitem", "VARCHAR"},
      {"pg_node_tree", "VARCHAR"}, {"anyarray", "VARCHAR"},    {"cstring", "VARCHAR"},
      {"xml", "VARCHAR"},          {"inet", "VARCHAR"},        {"cidr", "VARCHAR"},
      {"macaddr", "VARCHAR"},      {"money", "DOUBLE"},        {"regclass", "BIGINT"},
      {"regtype", "BIGINT"},       {"regnamespace", "BIGINT"}, {"regrole", "BIGINT"},
      {"regproc", "VARCHAR"},      {"regprocedure", "VARCHAR"}};
  for (const auto& [pg, duck] : kTypes) {
    if (pg == pg_type) return duck;
  }
  return {};
}

// The object-identifier types whose casts are rewritten: of a literal to its OID (a name for
// regproc), of any other expression to the object's name.
bool IsRegType(std::string_view name) {
  return name == "regclass" || name == "regtype" || name == "regnamespace" || name == "regrole" ||
         name == "regproc" || name == "regprocedure";
}

struct Edit {
  size_t begin;
  size_t end;
  std::string text;
};

class Rewriter {
 public:
  Rewriter(const std::string& sql, const Tokens& tokens, ColumnNames names)
      : sql_(sql), tokens_(tokens), names_(names) {}

  // Rewrites the statement `stmt` (the parse tree's top node).
  void Statement(const PgQuery__Node* stmt);
  std::string Result() const;
  bool changed() const { return !edits_.empty() || whole_.has_value(); }

 private:
  void Visit(const ProtobufCMessage* message);
  void VisitChildren(const ProtobufCMessage* message) {
    ForEachChild(message, [this](const ProtobufCMessage* child) { Visit(child); });
  }
  void RangeVar(const PgQuery__RangeVar* range);
  bool FuncCall(const PgQuery__FuncCall* call);
  void TypeCast(const PgQuery__TypeCast* cast);
  bool RegTypeCast(const PgQuery__TypeCast* cast);
  void TypeName(const PgQuery__TypeName* type);
  void AExpr(const PgQuery__AExpr* expr);
  void CollateClause(const PgQuery__CollateClause* collate);
  void SqlValueFunction(const PgQuery__SQLValueFunction* function);
  void ColumnRef(const PgQuery__ColumnRef* ref);
  void RangeFunction(const PgQuery__RangeFunction* range);
  void PublicNameTokens();
  void NameTargets(const PgQuery__SelectStmt* select);
  std::optional<size_t> TargetEnd(size_t first) const;

  // The tokens [first, last] of the dotted name at `location`, if it has `parts` parts.
  std::optional<std::pair<size_t, size_t>> NameAt(int32_t location, size_t parts) const;
  void Replace(size_t first_token, size_t last_token, std::string text) {
    edits_.push_back({tokens_[first_token].begin, tokens_[last_token].end, std::move(text)});
  }
  void Insert(size_t offset, std::string text) {
    edits_.push_back({offset, offset, std::move(text)});
  }

  const std::string& sql_;
  const Tokens& tokens_;
  const ColumnNames names_;
  std::vector<Edit> edits_;
  std::optional<std::string> whole_;         // the statement replaced as a whole
  std::unordered_set<const void*> targets_;  // relations written to: never routed to the catalog
};

std::optional<std::pair<size_t, size_t>> Rewriter::NameAt(int32_t location, size_t parts) const {
  if (location < 0) return std::nullopt;
  const auto first = tokens_.IndexAt(static_cast<size_t>(location));
  if (!first) return std::nullopt;
  const size_t last = tokens_.NameEnd(*first);
  if ((last - *first) / 2 + 1 != parts) return std::nullopt;
  return std::make_pair(*first, last);
}

void Rewriter::Statement(const PgQuery__Node* stmt) {
  switch (stmt->node_case) {
    case PG_QUERY__NODE__NODE_VARIABLE_SET_STMT:
    case PG_QUERY__NODE__NODE_VARIABLE_SHOW_STMT:
    case PG_QUERY__NODE__NODE_TRANSACTION_STMT:
      whole_ = RewriteSessionStatement(stmt);
      return;
    case PG_QUERY__NODE__NODE_CREATE_SCHEMA_STMT:
    case PG_QUERY__NODE__NODE_DROP_STMT:
      PublicNameTokens();
      return;
    case PG_QUERY__NODE__NODE_SELECT_STMT:
      if (names_ == ColumnNames::kPostgres) NameTargets(stmt->select_stmt);
      break;
    case PG_QUERY__NODE__NODE_INSERT_STMT:
      targets_.insert(stmt->insert_stmt->relation);
      break;
    case PG_QUERY__NODE__NODE_UPDATE_STMT:
      targets_.insert(stmt->update_stmt->relation);
      break;
    case PG_QUERY__NODE__NODE_DELETE_STMT:
      targets_.insert(stmt->delete_stmt->relation);
      break;
    case PG_QUERY__NODE__NODE_CREATE_STMT:
      targets_.insert(stmt->create_stmt->relation);
      break;
    case PG_QUERY__NODE__NODE_CREATE_TABLE_AS_STMT:
      if (stmt->create_table_as_stmt->into != nullptr) {
        targets_.insert(stmt->create_table_as_stmt->into->rel);
      }
      break;
    case PG_QUERY__NODE__NODE_VIEW_STMT:
      targets_.insert(stmt->view_stmt->view);
      break;
    case PG_QUERY__NODE__NODE_ALTER_TABLE_STMT:
      targets_.insert(stmt->alter_table_stmt->relation);
      break;
    case PG_QUERY__NODE__NODE_INDEX_STMT:
      targets_.insert(stmt->index_stmt->relation);
      break;
    case PG_QUERY__NODE__NODE_RENAME_STMT:
      targets_.insert(stmt->rename_stmt->relation);
      break;
    case PG_QUERY__NODE__NODE_TRUNCATE_STMT:
      for (size_t i = 0; i < stmt->truncate_stmt->n_relations; ++i) {
        if (stmt->truncate_stmt->relations[i]->node_case == PG_QUERY__NODE__NODE_RANGE_VAR) {
          targets_.insert(stmt->truncate_stmt->relations[i]->range_var);
        }
      }
      break;
    default:
      break;
  }
  Visit(&stmt->base);
}

void Rewriter::Visit(const ProtobufCMessage* message) {
  const ProtobufCMessageDescriptor* d = message->descriptor;
  if (d == &pg_query__range_var__descriptor) {
    RangeVar(reinterpret_cast<const PgQuery__RangeVar*>(message));
  } else if (d == &pg_query__func_call__descriptor) {
    if (!FuncCall(reinterpret_cast<const PgQuery__FuncCall*>(message))) return;
  } else if (d == &pg_query__type_cast__descriptor) {
    TypeCast(reinterpret_cast<const PgQuery__TypeCast*>(message));
    return;
  } else if (d == &pg_query__type_name__descriptor) {
    TypeName(reinterpret_cast<const PgQuery__TypeName*>(message));
    return;
  } else if (d == &pg_query__a__expr__descriptor) {
    AExpr(reinterpret_cast<const PgQuery__AExpr*>(message));
  } else if (d == &pg_query__collate_clause__descriptor) {
    CollateClause(reinterpret_cast<const PgQuery__CollateClause*>(message));
  } else if (d == &pg_query__sqlvalue_function__descriptor) {
    SqlValueFunction(reinterpret_cast<const PgQuery__SQLValueFunction*>(message));
  } else if (d == &pg_query__column_ref__descriptor) {
    ColumnRef(reinterpret_cast<const PgQuery__ColumnRef*>(message));
  } else if (d == &pg_query__range_function__descriptor) {
    RangeFunction(reinterpret_cast<const PgQuery__RangeFunction*>(message));
  }
  VisitChildren(message);
}

// pg_catalog.pg_class / pg_class → weir's pg_class; information_schema.tables → weir's;
// public.t → main.t.
void Rewriter::RangeVar(const PgQuery__RangeVar* range) {
  const std::string catalog = range->catalogname;
  const std::string schema = range->schemaname;
  const std::string relation = range->relname;
  const size_t parts = 1 + (schema.empty() ? 0 : 1) + (catalog.empty() ? 0 : 1);
  const auto name = NameAt(range->location, parts);
  if (!name) return;
  const bool this_database = catalog.empty() || catalog == kLakeCatalog;
  if (this_database && !targets_.contains(range)) {
    if ((schema.empty() || schema == "pg_catalog") && IsPgCatalogRelation(relation)) {
      Replace(name->first, name->second, std::string(kPgCatalog) + "." + relation);
      return;
    }
    if (schema == "information_schema" && IsInformationSchemaRelation(relation)) {
      Replace(name->first, name->second, std::string(kInformationSchema) + "." + relation);
      return;
    }
  }
  if (schema == "public") {
    const size_t schema_token = name->first + (catalog.empty() ? 0 : 2);
    Replace(schema_token, schema_token, "main");
  }
}

// Functions: weir's own where DuckDB lacks them or answers differently, DuckDB's where the
// client only qualified them with pg_catalog; current_setting() of PostgreSQL settings.
bool Rewriter::FuncCall(const PgQuery__FuncCall* call) {
  if (call->funcformat == PG_QUERY__COERCION_FORM__COERCE_SQL_SYNTAX || call->n_funcname > 2) {
    return true;
  }
  const std::vector<std::string> names = NamesOf(call->funcname, call->n_funcname);
  const std::string& function = names.back();
  const std::string schema = names.size() == 2 ? names[0] : "";
  const auto name = NameAt(call->location, names.size());
  if (!name) return true;
  if (schema == "information_schema" && IsInformationSchemaFunction(function)) {
    Replace(name->first, name->second, std::string(kInformationSchema) + "." + function);
    return true;
  }
  if (!schema.empty() && schema != "pg_catalog") return true;
  const bool has_parens = name->second + 1 < tokens_.size() &&
                          tokens_[name->second + 1].kind == PG_QUERY__TOKEN__ASCII_40;
  if (function == "current_setting" && call->n_args >= 1 && has_parens) {
    if (const char* setting_name = StringConstant(call->args[0])) {
      const PgSetting* setting = FindPgSetting(setting_name);
      const auto close = tokens_.ClosingParen(name->second + 1);
      if (setting != nullptr && close) {
        Replace(name->first, *close, "(" + SettingValueSql(*setting) + ")");
        return false;
      }
    } else if (call->n_args <= 2) {
      // DuckDB's current_setting() takes a constant only; $1 is looked up when it runs.
      Replace(name->first, name->second, std::string(kPgCatalog) + ".weir_current_setting");
      return true;
    }
  }
  if (function == "json_build_object" || function == "jsonb_build_object") {
    Replace(name->first, name->second, "json_object");  // DuckDB's name, same arguments
  } else if (IsPgCatalogFunction(function)) {
    Replace(name->first, name->second,
            std::string(kPgCatalog) + "." + function + (has_parens ? "" : "()"));
  } else if (!schema.empty()) {
    Replace(name->first, name->second, std::string(tokens_.Text(name->second)));
  }
  return true;
}

void Rewriter::TypeCast(const PgQuery__TypeCast* cast) {
  if (RegTypeCast(cast)) return;
  if (cast->arg != nullptr) Visit(&cast->arg->base);
  if (cast->type_name != nullptr) TypeName(cast->type_name);
}

// x::regclass and friends: DuckDB has no object-identifier types. A literal becomes the OID
// it names (regproc: the function's name, as weir's catalogs store them); $n is looked up
// the same way; any other expression becomes the object's name. True when handled (the
// argument visited as needed).
bool Rewriter::RegTypeCast(const PgQuery__TypeCast* cast) {
  if (cast->type_name == nullptr || cast->type_name->n_names == 0) return false;
  const PgQuery__TypeName* type = cast->type_name;
  const std::vector<std::string> names = NamesOf(type->names, type->n_names);
  const std::string& type_name = names.back();
  if (!IsRegType(type_name) || type->n_array_bounds > 0 || type->n_typmods > 0 ||
      (names.size() == 2 && names[0] != "pg_catalog") || names.size() > 2 || cast->arg == nullptr) {
    return false;
  }
  const auto type_tokens = NameAt(type->location, names.size());
  const auto cast_token =
      cast->location >= 0 ? tokens_.IndexAt(static_cast<size_t>(cast->location)) : std::nullopt;
  if (!type_tokens || !cast_token) return false;
  const bool postfix = tokens_[*cast_token].kind == PG_QUERY__TOKEN__TYPECAST;
  const bool function_form = tokens_[*cast_token].kind == PG_QUERY__TOKEN__CAST;
  if (!postfix && !function_form) return false;
  const std::string base = type_name == "regprocedure" ? "regproc" : type_name;
  const std::string prefix = std::string(kPgCatalog) + ".weir_" + base;
  const int32_t arg_start = StartOf(&cast->arg->base);
  if (arg_start < 0) return false;
  // The whole cast expression's text range [begin, end).
  size_t begin = static_cast<size_t>(arg_start);
  size_t end = tokens_[type_tokens->second].end;
  if (function_form) {
    const auto close = type_tokens->second + 1 < tokens_.size() &&
                               tokens_[type_tokens->second + 1].kind == PG_QUERY__TOKEN__ASCII_41
                           ? std::optional<size_t>(type_tokens->second + 1)
                           : std::nullopt;
    if (!close || type_tokens->first == 0) return false;
    begin = tokens_[*cast_token].begin;
    end = tokens_[*close].end;
  }
  const PgQuery__Node* arg = cast->arg;
  if (const char* literal = StringConstant(arg)) {
    std::string text;
    if (base == "regproc") {
      std::string_view function = literal;
      if (function.starts_with("pg_catalog.")) function.remove_prefix(11);
      text = QuoteLiteral(function.substr(0, function.find('(')));
    } else {
      text = prefix + "_oid(" + QuoteLiteral(literal) + ")";
    }
    edits_.push_back({begin, end, text});
    return true;
  }
  const bool number = arg->node_case == PG_QUERY__NODE__NODE_A_CONST &&
                      arg->a_const->val_case == PG_QUERY__A__CONST__VAL_IVAL;
  const bool parameter = arg->node_case == PG_QUERY__NODE__NODE_PARAM_REF;
  std::string function;  // empty: the value passes as it is
  if (parameter) {
    function = base == "regproc" ? "" : prefix + "_oid";
  } else if (!number) {
    function = base == "regproc" ? "" : prefix + "_name";
  }
  if (postfix) {
    const size_t cast_begin = tokens_[*cast_token].begin;
    if (!function.empty()) Insert(begin, function + "(");
    edits_.push_back({cast_begin, end, function.empty() ? "" : ")"});
  } else {
    // CAST(arg AS regclass) → function(arg), or (arg).
    const size_t as_token = type_tokens->first - 1;
    edits_.push_back({tokens_[*cast_token].begin, tokens_[*cast_token].end, function});
    edits_.push_back({tokens_[as_token].begin, tokens_[type_tokens->second].end, ""});
  }
  Visit(&arg->base);
  return true;
}

// pg_catalog.int4 → int4; types DuckDB lacks → the DuckDB type that holds them.
void Rewriter::TypeName(const PgQuery__TypeName* type) {
  const std::vector<std::string> names = NamesOf(type->names, type->n_names);
  if (names.empty() || names.size() > 2) return;
  const auto name = NameAt(type->location, names.size());
  if (!name) return;  // written as SQL syntax (`double precision`, `integer`)
  if (names.size() == 2 && names[0] != "pg_catalog") return;
  const std::string_view duck = DuckDbTypeFor(names.back());
  if (!duck.empty()) {
    Replace(name->first, name->second, std::string(duck));
  } else if (names.size() == 2) {
    Replace(name->first, name->second, std::string(tokens_.Text(name->second)));
  }
}

// OPERATOR(pg_catalog.op) → op; PostgreSQL's regular expression match (~, ~*, !~, !~*)
// finds the pattern anywhere, DuckDB's ~ matches the whole string, so a constant pattern is
// wrapped to match anywhere; LIKE patterns with backslashes get PostgreSQL's default escape.
void Rewriter::AExpr(const PgQuery__AExpr* expr) {
  if (expr->n_name == 0 || expr->n_name > 2) return;
  const std::vector<std::string> names = NamesOf(expr->name, expr->n_name);
  std::string op = names.back();
  const auto op_token =
      expr->location >= 0 ? tokens_.IndexAt(static_cast<size_t>(expr->location)) : std::nullopt;
  if (!op_token) return;
  const bool operator_syntax = tokens_[*op_token].kind == PG_QUERY__TOKEN__OPERATOR;
  std::optional<size_t> op_last = *op_token;
  if (operator_syntax) {
    op_last = *op_token + 1 < tokens_.size() ? tokens_.ClosingParen(*op_token + 1) : std::nullopt;
    if (!op_last) return;
  }
  const PgQuery__Node* pattern = expr->rexpr;
  if (pattern != nullptr && pattern->node_case == PG_QUERY__NODE__NODE_COLLATE_CLAUSE) {
    pattern = pattern->collate_clause->arg;
  }
  const char* literal = StringConstant(pattern);
  const bool regex = expr->kind == PG_QUERY__A__EXPR__KIND__AEXPR_OP &&
                     (op == "~" || op == "~*" || op == "!~" || op == "!~*");
  if (regex && literal != nullptr) {
    const bool insensitive = op.back() == '*';
    if (insensitive) op.pop_back();
    const auto pattern_token = tokens_.IndexAt(static_cast<size_t>(pattern->a_const->location));
    if (pattern_token) {
      Replace(
          *pattern_token, *pattern_token,
          QuoteLiteral(std::string(insensitive ? "(?si)" : "(?s)") + ".*(?:" + literal + ").*"));
    }
    if (operator_syntax || insensitive) Replace(*op_token, *op_last, op);
    return;
  }
  const bool like = expr->kind == PG_QUERY__A__EXPR__KIND__AEXPR_LIKE ||
                    expr->kind == PG_QUERY__A__EXPR__KIND__AEXPR_ILIKE;
  if (like && literal != nullptr && std::string_view(literal).find('\\') != std::string::npos) {
    const auto pattern_token = tokens_.IndexAt(static_cast<size_t>(pattern->a_const->location));
    if (pattern_token) Insert(tokens_[*pattern_token].end, " ESCAPE '\\'");
  }
  if (operator_syntax) Replace(*op_token, *op_last, op);
}

// COLLATE pg_catalog.default / "C" / "POSIX": DuckDB's default comparison is already
// byte-wise, and it knows none of these names.
void Rewriter::CollateClause(const PgQuery__CollateClause* collate) {
  const std::vector<std::string> names = NamesOf(collate->collname, collate->n_collname);
  const std::string collation = ToLower(names.empty() ? "" : names.back());
  if (collation != "default" && collation != "c" && collation != "posix") return;
  if (names.size() == 2 && names[0] != "pg_catalog") return;
  const auto keyword = collate->location >= 0
                           ? tokens_.IndexAt(static_cast<size_t>(collate->location))
                           : std::nullopt;
  if (!keyword || tokens_[*keyword].kind != PG_QUERY__TOKEN__COLLATE) return;
  const size_t last = tokens_.NameEnd(*keyword + 1);
  Replace(*keyword, last, "");
}

// current_user, session_user, user, current_role, current_schema (keywords in PostgreSQL).
void Rewriter::SqlValueFunction(const PgQuery__SQLValueFunction* function) {
  std::string replacement;
  switch (function->op) {
    case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_USER:
    case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_ROLE:
    case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_USER:
    case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_SESSION_USER:
      replacement = std::string(kPgCatalog) + ".weir_user_name()";
      break;
    case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_SCHEMA:
      replacement = std::string(kPgCatalog) + ".current_schema()";
      break;
    default:
      return;
  }
  const auto keyword = function->location >= 0
                           ? tokens_.IndexAt(static_cast<size_t>(function->location))
                           : std::nullopt;
  if (keyword) Replace(*keyword, *keyword, replacement);
}

// public.t.c → main.t.c; pg_catalog.pg_class.relname → pg_class.relname (the relation is
// weir's, whose name DuckDB binds without the schema the client wrote).
void Rewriter::ColumnRef(const PgQuery__ColumnRef* ref) {
  if (ref->n_fields < 3) return;
  const size_t schema_field = ref->n_fields - 3;
  const std::string schema = StringOf(ref->fields[schema_field]);
  const std::string relation = StringOf(ref->fields[schema_field + 1]);
  const auto first =
      ref->location >= 0 ? tokens_.IndexAt(static_cast<size_t>(ref->location)) : std::nullopt;
  if (!first) return;
  const size_t token = *first + 2 * schema_field;
  if (token + 1 >= tokens_.size() || ToLower(tokens_.Text(token)) != schema) return;
  if (schema == "public") {
    Replace(token, token, "main");
  } else if (schema_field == 0 &&
             ((schema == "pg_catalog" && IsPgCatalogRelation(relation)) ||
              (schema == "information_schema" && IsInformationSchemaRelation(relation)))) {
    Replace(token, token + 1, "");
  }
}

// FROM generate_series(1, 3) s: in PostgreSQL the alias of a function returning single
// values also names its column (s is a number); in DuckDB it names the row (s is a struct).
// The column gets the alias as its name: s(s).
void Rewriter::RangeFunction(const PgQuery__RangeFunction* range) {
  if (range->alias == nullptr || range->alias->n_colnames > 0 || range->n_functions != 1 ||
      range->is_rowsfrom || range->ordinality || range->n_coldeflist > 0) {
    return;
  }
  const PgQuery__Node* item = range->functions[0];
  if (item->node_case != PG_QUERY__NODE__NODE_LIST || item->list->n_items == 0 ||
      item->list->items[0]->node_case != PG_QUERY__NODE__NODE_FUNC_CALL) {
    return;
  }
  const PgQuery__FuncCall* call = item->list->items[0]->func_call;
  const std::vector<std::string> names = NamesOf(call->funcname, call->n_funcname);
  const std::string& function = names.back();
  const bool scalar = function == "generate_series" || function == "generate_subscripts" ||
                      (function == "unnest" && call->n_args == 1);
  if (!scalar || (names.size() == 2 && names[0] != "pg_catalog")) return;
  const auto name = NameAt(call->location, names.size());
  if (!name || name->second + 1 >= tokens_.size()) return;
  const auto close = tokens_.ClosingParen(name->second + 1);
  if (!close) return;
  size_t alias = *close + 1;
  if (alias < tokens_.size() && tokens_[alias].kind == PG_QUERY__TOKEN__AS) ++alias;
  if (alias >= tokens_.size()) return;
  const std::string text(tokens_.Text(alias));
  if (ToLower(text) != ToLower(range->alias->aliasname) &&
      text != "\"" + std::string(range->alias->aliasname) + "\"") {
    return;
  }
  Insert(tokens_[alias].end, "(" + text + ")");
}

// The result columns of a query PostgreSQL names differently from DuckDB get PostgreSQL's
// name as an alias (`count` for count(*), `?column?` for 1 + 1, `int4` for '1'::int4, ...):
// clients key on them. A column reference keeps its own name, which DuckDB gives too; a set
// operation's columns are named by its leftmost query, as in PostgreSQL.
void Rewriter::NameTargets(const PgQuery__SelectStmt* select) {
  while (select->larg != nullptr) select = select->larg;
  if (select->into_clause != nullptr) return;
  for (size_t i = 0; i < select->n_target_list; ++i) {
    const PgQuery__Node* node = select->target_list[i];
    if (node->node_case != PG_QUERY__NODE__NODE_RES_TARGET) continue;
    const PgQuery__ResTarget* target = node->res_target;
    if ((target->name != nullptr && *target->name != '\0') || target->val == nullptr ||
        target->val->node_case == PG_QUERY__NODE__NODE_COLUMN_REF || target->location < 0) {
      continue;
    }
    const auto first = tokens_.IndexAt(static_cast<size_t>(target->location));
    if (!first) continue;
    const auto last = TargetEnd(*first);
    if (!last) continue;
    const std::string name = PgColumnName(target->val);
    // DuckDB takes these keywords for column references that fall back to its functions, and
    // names them alike; an alias of the same name would be bound instead (a binder error).
    if (name == "current_date" || name == "current_time" || name == "current_timestamp" ||
        name == "localtime" || name == "localtimestamp" || name == "current_catalog") {
      continue;
    }
    std::string quoted = "\"";
    for (char c : name) {
      quoted += c;
      if (c == '"') quoted += '"';
    }
    Insert(tokens_[*last].end, " AS " + quoted + "\"");
  }
}

// The last token of the select-list item starting at token `first`: the one before the comma,
// clause keyword or closing parenthesis that ends the item at its own depth.
std::optional<size_t> Rewriter::TargetEnd(size_t first) const {
  static constexpr std::string_view kClauses[] = {
      "from",  "into",   "where", "group", "having", "window",    "order",
      "limit", "offset", "fetch", "for",   "union",  "intersect", "except"};
  int depth = 0;
  for (size_t i = first; i < tokens_.size(); ++i) {
    const std::string_view text = tokens_.Text(i);
    if (text == "(" || text == "[") {
      ++depth;
      continue;
    }
    if (text == ")" || text == "]") {
      if (depth == 0) return i > first ? std::optional<size_t>(i - 1) : std::nullopt;
      --depth;
      continue;
    }
    if (depth > 0 || i == first) continue;
    if (text == "," || text == ";") return i - 1;
    if (!tokens_[i].keyword) continue;
    const std::string word = ToLower(text);
    if (std::find(std::begin(kClauses), std::end(kClauses), word) == std::end(kClauses)) continue;
    const std::string before = ToLower(tokens_.Text(i - 1));
    if (word == "from" && before == "distinct") continue;  // IS [NOT] DISTINCT FROM
    if (word == "group" && before == "within") continue;   // WITHIN GROUP (ORDER BY ...)
    return i - 1;
  }
  return tokens_.size() > first ? std::optional<size_t>(tokens_.size() - 1) : std::nullopt;
}

// Statements whose names carry no locations (DROP TABLE public.t, CREATE SCHEMA public): the
// schema name public in a dotted name, or after SCHEMA, becomes main.
void Rewriter::PublicNameTokens() {
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const std::string text = ToLower(tokens_.Text(i));
    if (text != "public" && text != "\"public\"") continue;
    const bool dotted = i + 1 < tokens_.size() && tokens_[i + 1].kind == PG_QUERY__TOKEN__ASCII_46;
    const bool after_schema = i > 0 && ToLower(tokens_.Text(i - 1)) == "schema";
    const bool after_exists = i > 0 && ToLower(tokens_.Text(i - 1)) == "exists";
    if (dotted || after_schema || after_exists) Replace(i, i, "main");
  }
}

std::string Rewriter::Result() const {
  if (whole_) return *whole_;
  std::vector<Edit> edits = edits_;
  std::stable_sort(edits.begin(), edits.end(),
                   [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
  std::string out;
  size_t at = 0;
  for (const Edit& edit : edits) {
    if (edit.begin < at) continue;  // inside an edit already made (never expected)
    out.append(sql_, at, edit.begin - at);
    out += edit.text;
    at = edit.end;
  }
  out.append(sql_, at, std::string::npos);
  return out;
}

}  // namespace

std::string RewriteForDuckDb(const std::string& statement, ColumnNames names) {
  if (!MayNeedRewriting(statement, names)) return statement;
  const auto tokens = Tokens::Scan(statement);
  if (!tokens) return statement;
  PgQueryProtobufParseResult parsed = pg_query_parse_protobuf(statement.c_str());
  std::string result = statement;
  if (parsed.error == nullptr) {
    PgQuery__ParseResult* tree = pg_query__parse_result__unpack(
        nullptr, parsed.parse_tree.len, reinterpret_cast<const uint8_t*>(parsed.parse_tree.data));
    if (tree != nullptr) {
      if (tree->n_stmts == 1 && tree->stmts[0]->stmt != nullptr) {
        Rewriter rewriter(statement, *tokens, names);
        rewriter.Statement(tree->stmts[0]->stmt);
        if (rewriter.changed()) result = rewriter.Result();
      }
      pg_query__parse_result__free_unpacked(tree, nullptr);
    }
  }
  pg_query_free_protobuf_parse_result(parsed);
  return result;
}

}  // namespace weir::serve::compat
