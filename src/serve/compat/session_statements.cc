// SET, SHOW and transaction statements: PostgreSQL's session settings (see settings.h),
// BEGIN with isolation levels, savepoints.
#include "serve/compat/session_statements.h"
#include "base/sql_quote.h"

#include <string>
#include <string_view>
#include <vector>

#include "serve/compat/parse_tree.h"
#include "serve/compat/settings.h"

namespace weir::serve::compat {

std::optional<std::string> RewriteSessionStatement(const PgQuery__Node* stmt) {
  switch (stmt->node_case) {
    case PG_QUERY__NODE__NODE_VARIABLE_SET_STMT: {
      const PgQuery__VariableSetStmt* set = stmt->variable_set_stmt;
      std::vector<std::string> values;
      std::string name = set->name;
      if (set->kind == PG_QUERY__VARIABLE_SET_KIND__VAR_SET_MULTI) {
        // SET TRANSACTION ... / SET SESSION CHARACTERISTICS AS TRANSACTION ...: DuckDB's
        // transactions are snapshot isolated whatever is asked; the choice is remembered.
        const bool session = name == "SESSION CHARACTERISTICS";
        for (size_t i = 0; i < set->n_args; ++i) {
          const PgQuery__Node* arg = set->args[i];
          if (arg->node_case != PG_QUERY__NODE__NODE_DEF_ELEM) continue;
          const PgQuery__DefElem* option = arg->def_elem;
          name = std::string(session ? "default_" : "") + option->defname;
          if (const char* text = StringConstant(option->arg)) {
            values = {text};
          } else if (option->arg != nullptr &&
                     option->arg->node_case == PG_QUERY__NODE__NODE_A_CONST &&
                     option->arg->a_const->val_case == PG_QUERY__A__CONST__VAL_IVAL) {
            values = {option->arg->a_const->ival->ival != 0 ? "on" : "off"};
          }
          break;
        }
        if (values.empty()) return std::nullopt;
      }
      for (size_t i = 0; i < set->n_args && set->kind == PG_QUERY__VARIABLE_SET_KIND__VAR_SET_VALUE;
           ++i) {
        const PgQuery__Node* arg = set->args[i];
        if (const char* text = StringConstant(arg)) {
          values.emplace_back(text);
        } else if (arg->node_case == PG_QUERY__NODE__NODE_A_CONST &&
                   arg->a_const->val_case == PG_QUERY__A__CONST__VAL_IVAL) {
          values.push_back(std::to_string(arg->a_const->ival->ival));
        } else if (arg->node_case == PG_QUERY__NODE__NODE_A_CONST &&
                   arg->a_const->val_case == PG_QUERY__A__CONST__VAL_FVAL) {
          values.emplace_back(arg->a_const->fval->fval);
        } else {
          return std::nullopt;  // an expression (SET TIME ZONE INTERVAL ...): DuckDB decides
        }
      }
      const bool reset = set->kind == PG_QUERY__VARIABLE_SET_KIND__VAR_SET_DEFAULT ||
                         set->kind == PG_QUERY__VARIABLE_SET_KIND__VAR_RESET;
      if (set->kind == PG_QUERY__VARIABLE_SET_KIND__VAR_RESET_ALL ||
          set->kind == PG_QUERY__VARIABLE_SET_KIND__VAR_SET_CURRENT) {
        return std::nullopt;
      }
      return SetStatementSql(name, values, reset);
    }
    case PG_QUERY__NODE__NODE_VARIABLE_SHOW_STMT:
      return ShowStatementSql(stmt->variable_show_stmt->name);
    case PG_QUERY__NODE__NODE_TRANSACTION_STMT: {
      const PgQuery__TransactionStmt* transaction = stmt->transaction_stmt;
      // DuckDB has no savepoints. Setting and releasing one changes nothing while nothing
      // fails; rolling back to one cannot be done, and the error it gets aborts the whole
      // transaction (DuckDB keeps nothing of a transaction with a failed statement).
      switch (transaction->kind) {
        case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_SAVEPOINT:
          return "SET VARIABLE weir_savepoint = " + QuoteLiteral(transaction->savepoint_name);
        case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_RELEASE:
          return "RESET VARIABLE weir_savepoint";
        case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_ROLLBACK_TO:
          return "SELECT error('ROLLBACK TO SAVEPOINT is not supported: the transaction is "
                 "aborted')";
        default:
          break;
      }
      const bool begins = transaction->kind == PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_BEGIN ||
                          transaction->kind == PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_START;
      if (!begins || transaction->n_options == 0) return std::nullopt;
      // DuckDB has no isolation levels to choose (its transactions are snapshot isolated);
      // READ ONLY it knows.
      bool read_only = false;
      for (size_t i = 0; i < transaction->n_options; ++i) {
        const PgQuery__Node* option = transaction->options[i];
        if (option->node_case != PG_QUERY__NODE__NODE_DEF_ELEM) continue;
        const PgQuery__DefElem* def = option->def_elem;
        if (std::string_view(def->defname) == "transaction_read_only" && def->arg != nullptr &&
            def->arg->node_case == PG_QUERY__NODE__NODE_A_CONST &&
            def->arg->a_const->val_case == PG_QUERY__A__CONST__VAL_IVAL) {
          read_only = def->arg->a_const->ival->ival != 0;
        }
      }
      return read_only ? "BEGIN TRANSACTION READ ONLY" : "BEGIN TRANSACTION";
    }
    default:
      return std::nullopt;
  }
}

}  // namespace weir::serve::compat
