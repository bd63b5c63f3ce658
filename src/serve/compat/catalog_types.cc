// PostgreSQL's types as weir presents them: the rows of pg_type (built-in OIDs and names) and
// the mapping from DuckDB column types to them, which mirrors the engine's PgTypeOf (the OIDs
// a RowDescription carries for the same columns).
#include <string>
#include <vector>

#include "base/sql_quote.h"
#include "serve/compat/catalog_sql.h"

namespace weir::serve::compat {
namespace {

struct PgTypeRow {
  int oid;
  const char* typname;
  const char* display;  // format_type() without modifiers
  int typlen;
  bool typbyval;
  char typtype;      // b base, p pseudo
  char typcategory;  // N numeric, S string, D datetime, ...
  int array_oid;     // 0: no array type
  int collation;     // 100 for collatable types
  char typalign;
  char typstorage;
  const char* input;  // the name of the input function (regproc shown as text)
};

// The base types (their array types are derived: `_name`, category A, element = the base).
constexpr PgTypeRow kBaseTypes[] = {
    {16, "bool", "boolean", 1, true, 'b', 'B', 1000, 0, 'c', 'p', "boolin"},
    {17, "bytea", "bytea", -1, false, 'b', 'U', 1001, 0, 'i', 'x', "byteain"},
    {18, "char", "\"char\"", 1, true, 'b', 'Z', 1002, 0, 'c', 'p', "charin"},
    {19, "name", "name", 64, false, 'b', 'S', 1003, 950, 'c', 'p', "namein"},
    {20, "int8", "bigint", 8, true, 'b', 'N', 1016, 0, 'd', 'p', "int8in"},
    {21, "int2", "smallint", 2, true, 'b', 'N', 1005, 0, 's', 'p', "int2in"},
    {22, "int2vector", "int2vector", -1, false, 'b', 'A', 1006, 0, 'i', 'p', "int2vectorin"},
    {23, "int4", "integer", 4, true, 'b', 'N', 1007, 0, 'i', 'p', "int4in"},
    {24, "regproc", "regproc", 4, true, 'b', 'N', 1008, 0, 'i', 'p', "regprocin"},
    {25, "text", "text", -1, false, 'b', 'S', 1009, 100, 'i', 'x', "textin"},
    {26, "oid", "oid", 4, true, 'b', 'N', 1028, 0, 'i', 'p', "oidin"},
    {30, "oidvector", "oidvector", -1, false, 'b', 'A', 1013, 0, 'i', 'p', "oidvectorin"},
    {114, "json", "json", -1, false, 'b', 'U', 199, 0, 'i', 'x', "json_in"},
    {142, "xml", "xml", -1, false, 'b', 'U', 143, 0, 'i', 'x', "xml_in"},
    {194, "pg_node_tree", "pg_node_tree", -1, false, 'b', 'Z', 0, 100, 'i', 'x', "pg_node_tree_in"},
    {700, "float4", "real", 4, true, 'b', 'N', 1021, 0, 'i', 'p', "float4in"},
    {701, "float8", "double precision", 8, true, 'b', 'N', 1022, 0, 'd', 'p', "float8in"},
    {705, "unknown", "unknown", -2, false, 'p', 'X', 0, 0, 'c', 'p', "unknownin"},
    {790, "money", "money", 8, true, 'b', 'N', 791, 0, 'd', 'p', "cash_in"},
    {1033, "aclitem", "aclitem", 12, false, 'b', 'U', 1034, 0, 'i', 'p', "aclitemin"},
    {1042, "bpchar", "character", -1, false, 'b', 'S', 1014, 100, 'i', 'x', "bpcharin"},
    {1043, "varchar", "character varying", -1, false, 'b', 'S', 1015, 100, 'i', 'x', "varcharin"},
    {1082, "date", "date", 4, true, 'b', 'D', 1182, 0, 'i', 'p', "date_in"},
    {1083, "time", "time without time zone", 8, true, 'b', 'D', 1183, 0, 'd', 'p', "time_in"},
    {1114, "timestamp", "timestamp without time zone", 8, true, 'b', 'D', 1115, 0, 'd', 'p',
     "timestamp_in"},
    {1184, "timestamptz", "timestamp with time zone", 8, true, 'b', 'D', 1185, 0, 'd', 'p',
     "timestamptz_in"},
    {1186, "interval", "interval", 16, false, 'b', 'T', 1187, 0, 'd', 'p', "interval_in"},
    {1266, "timetz", "time with time zone", 12, false, 'b', 'D', 1270, 0, 'd', 'p', "timetz_in"},
    {1560, "bit", "bit", -1, false, 'b', 'V', 1561, 0, 'i', 'x', "bit_in"},
    {1562, "varbit", "bit varying", -1, false, 'b', 'V', 1563, 0, 'i', 'x', "varbit_in"},
    {1700, "numeric", "numeric", -1, false, 'b', 'N', 1231, 0, 'i', 'm', "numeric_in"},
    {2205, "regclass", "regclass", 4, true, 'b', 'N', 2210, 0, 'i', 'p', "regclassin"},
    {2206, "regtype", "regtype", 4, true, 'b', 'N', 2211, 0, 'i', 'p', "regtypein"},
    {2249, "record", "record", -1, false, 'p', 'P', 2287, 0, 'd', 'x', "record_in"},
    {2275, "cstring", "cstring", -2, false, 'p', 'P', 1263, 0, 'c', 'p', "cstring_in"},
    {2276, "any", "\"any\"", 4, true, 'p', 'P', 0, 0, 'i', 'p', "any_in"},
    {2277, "anyarray", "anyarray", -1, false, 'p', 'P', 0, 0, 'd', 'x', "anyarray_in"},
    {2278, "void", "void", 4, true, 'p', 'P', 0, 0, 'i', 'p', "void_in"},
    {2950, "uuid", "uuid", 16, false, 'b', 'U', 2951, 0, 'c', 'p', "uuid_in"},
    {3802, "jsonb", "jsonb", -1, false, 'b', 'U', 3807, 0, 'i', 'x', "jsonb_in"},
    {4089, "regnamespace", "regnamespace", 4, true, 'b', 'N', 4090, 0, 'i', 'p', "regnamespacein"},
};

std::string Row(int oid, const std::string& typname, const std::string& display, int typlen,
                bool byval, char typtype, char category, int elem, int array_oid, int collation,
                char align, char storage, const std::string& input, const std::string& output) {
  return "(" + std::to_string(oid) + ", " + QuoteLiteral(typname) + ", " + QuoteLiteral(display) +
         ", " + std::to_string(typlen) + ", " + (byval ? "true" : "false") + ", " +
         QuoteLiteral(std::string(1, typtype)) + ", " + QuoteLiteral(std::string(1, category)) +
         ", " + std::to_string(elem) + ", " + std::to_string(array_oid) + ", " +
         std::to_string(collation) + ", " + QuoteLiteral(std::string(1, align)) + ", " +
         QuoteLiteral(std::string(1, storage)) + ", " + QuoteLiteral(input) + ", " +
         QuoteLiteral(output) + ")";
}

}  // namespace

std::vector<std::string> TypeCatalogSql() {
  std::vector<std::string> sql;
  // The rows of pg_type (display = format_type's name), kept in a table: they never change.
  std::string rows;
  std::string display;  // CASE arms: oid → format_type's name
  std::string arrays;   // CASE arms: element oid → array oid
  for (const PgTypeRow& t : kBaseTypes) {
    display += " WHEN " + std::to_string(t.oid) + " THEN " + QuoteLiteral(t.display);
    if (t.array_oid != 0) {
      display += " WHEN " + std::to_string(t.array_oid) + " THEN " +
                 QuoteLiteral(std::string(t.display) + "[]");
      arrays += " WHEN " + std::to_string(t.oid) + " THEN " + std::to_string(t.array_oid);
    }
    const std::string name = t.typname;
    std::string output = t.input;
    output.replace(output.size() - 2, 2, "out");
    rows += (rows.empty() ? "" : ",\n") + Row(t.oid, name, t.display, t.typlen, t.typbyval,
                                              t.typtype, t.typcategory, 0, t.array_oid, t.collation,
                                              t.typalign, t.typstorage, t.input, output);
    if (t.array_oid != 0) {
      rows += ",\n" + Row(t.array_oid, "_" + name, std::string(t.display) + "[]", -1, false, 'b',
                          'A', t.oid, 0, t.collation, t.typalign == 'd' ? 'd' : 'i', 'x',
                          "array_in", "array_out");
    }
  }
  sql.push_back(QualifySchemas(
      "CREATE TABLE @.weir_types (oid BIGINT PRIMARY KEY, typname VARCHAR, "
      "display VARCHAR, typlen SMALLINT, typbyval BOOLEAN, typtype VARCHAR, typcategory VARCHAR, "
      "typelem BIGINT, typarray BIGINT, typcollation BIGINT, typalign VARCHAR, typstorage "
      "VARCHAR, typinput VARCHAR, typoutput VARCHAR)"));
  sql.push_back(QualifySchemas("INSERT INTO @.weir_types VALUES\n") + rows);
  // format_type's name without modifiers, as a plain expression (usable inside lambdas,
  // where DuckDB allows no subquery).
  sql.push_back(QualifySchemas("CREATE MACRO @.weir_type_display(type_oid) AS CASE type_oid") +
                display + " END");
  sql.push_back(QualifySchemas("CREATE MACRO @.weir_array_type_oid(element_oid) AS CASE "
                               "element_oid") +
                arrays + " END");

  // The PostgreSQL type of a DuckDB column type (its name as duckdb_columns() spells it), as
  // the engine's PgTypeOf presents it: unsigned integers widen, JSON is json, types PostgreSQL
  // has no counterpart of are text, a list or array of lists is one multi-dimensional array.
  sql.push_back(QualifySchemas(R"(CREATE MACRO @.weir_scalar_type_oid(t) AS CASE
  WHEN t = 'BOOLEAN' THEN 16
  WHEN t IN ('TINYINT', 'SMALLINT', 'UTINYINT') THEN 21
  WHEN t IN ('INTEGER', 'USMALLINT') THEN 23
  WHEN t IN ('BIGINT', 'UINTEGER') THEN 20
  WHEN t = 'FLOAT' THEN 700
  WHEN t = 'DOUBLE' THEN 701
  WHEN t IN ('HUGEINT', 'UBIGINT', 'UHUGEINT') OR t LIKE 'DECIMAL(%' THEN 1700
  WHEN t = 'DATE' THEN 1082
  WHEN t IN ('TIME', 'TIME_NS') THEN 1083
  WHEN t = 'TIME WITH TIME ZONE' THEN 1266
  WHEN t IN ('TIMESTAMP', 'TIMESTAMP_S', 'TIMESTAMP_MS', 'TIMESTAMP_NS') THEN 1114
  WHEN t = 'TIMESTAMP WITH TIME ZONE' THEN 1184
  WHEN t = 'INTERVAL' THEN 1186
  WHEN t = 'UUID' THEN 2950
  WHEN t IN ('BLOB', 'GEOMETRY') THEN 17
  WHEN t = 'JSON' THEN 114
  ELSE 25 END)"));
  sql.push_back(QualifySchemas(R"(CREATE MACRO @.weir_type_oid(t) AS CASE
  WHEN ends_with(t, ']') THEN
    coalesce(@.weir_array_type_oid(
      @.weir_scalar_type_oid(regexp_replace(t, '(\[\d*\])+$', ''))), 1009)
  ELSE @.weir_scalar_type_oid(t) END)"));
  // atttypmod: numeric(p,s) is ((p << 16) | s) + 4 as in PostgreSQL; -1 for everything else.
  sql.push_back(QualifySchemas(R"(CREATE MACRO @.weir_type_mod(t) AS CASE
  WHEN regexp_matches(t, '^DECIMAL\(\d+,\d+\)') THEN
    ((CAST(regexp_extract(t, '^DECIMAL\((\d+),(\d+)\)', 1) AS INTEGER) << 16)
      | CAST(regexp_extract(t, '^DECIMAL\((\d+),(\d+)\)', 2) AS INTEGER)) + 4
  ELSE -1 END)"));
  return sql;
}

}  // namespace weir::serve::compat
