#include "serve/values/values.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace weir::serve {
namespace {

// A value as DuckDB computes it and as PostgreSQL 15 sends it (DateStyle ISO, TimeZone UTC,
// IntervalStyle postgres, extra_float_digits 1). The expectations were produced by a real
// PostgreSQL 15.20 server from the equivalent PostgreSQL expression.
struct Case {
  const char* duckdb;       // a DuckDB expression
  const char* duckdb_type;  // its DuckDB type
  uint32_t oid;
  int32_t modifier;
  int16_t size;
  const char* name;    // format_type()
  const char* text;    // text output
  const char* binary;  // binary output, in hex; kTextOnly when PostgreSQL's form is not sent
};

constexpr const char* kTextOnly = nullptr;

// clang-format off
const Case kCases[] = {
    {"true", "BOOLEAN", 16, -1, 1, "boolean", "t", "01"},
    {"false", "BOOLEAN", 16, -1, 1, "boolean", "f", "00"},
    {"(-128)::TINYINT", "TINYINT", 21, -1, 2, "smallint", "-128", "ff80"},
    {"127::TINYINT", "TINYINT", 21, -1, 2, "smallint", "127", "007f"},
    {"(-32768)::SMALLINT", "SMALLINT", 21, -1, 2, "smallint", "-32768", "8000"},
    {"0::SMALLINT", "SMALLINT", 21, -1, 2, "smallint", "0", "0000"},
    {"255::UTINYINT", "UTINYINT", 21, -1, 2, "smallint", "255", "00ff"},
    {"(-2147483648)::INTEGER", "INTEGER", 23, -1, 4, "integer", "-2147483648", "80000000"},
    {"2147483647::INTEGER", "INTEGER", 23, -1, 4, "integer", "2147483647", "7fffffff"},
    {"65535::USMALLINT", "USMALLINT", 23, -1, 4, "integer", "65535", "0000ffff"},
    {"(-9223372036854775808)::BIGINT", "BIGINT", 20, -1, 8, "bigint", "-9223372036854775808", "8000000000000000"},
    {"9223372036854775807::BIGINT", "BIGINT", 20, -1, 8, "bigint", "9223372036854775807", "7fffffffffffffff"},
    {"4294967295::UINTEGER", "UINTEGER", 20, -1, 8, "bigint", "4294967295", "00000000ffffffff"},
    {"18446744073709551615::UBIGINT", "UBIGINT", 1700, -1, -1, "numeric", "18446744073709551615", "000500040000000007341a5802e103bb064f"},
    {"0::UBIGINT", "UBIGINT", 1700, -1, -1, "numeric", "0", "0000000000000000"},
    {"(-170141183460469231731687303715884105728)::HUGEINT", "HUGEINT", 1700, -1, -1, "numeric", "-170141183460469231731687303715884105728", "000a00094000000000aa0583209a01d5090d0c601c871bf620da1660"},
    {"10000::HUGEINT", "HUGEINT", 1700, -1, -1, "numeric", "10000", "00010001000000000001"},
    {"340282366920938463463374607431768211455::UHUGEINT", "UHUGEINT", 1700, -1, -1, "numeric", "340282366920938463463374607431768211455", "000a00090000000001540b071a2403aa121a18c111ff10dd1aa505af"},
    {"0.1::FLOAT", "FLOAT", 700, -1, 4, "real", "0.1", "3dcccccd"},
    {"1.5e-7::FLOAT", "FLOAT", 700, -1, 4, "real", "1.5e-07", "34210fb0"},
    {"123456.7::FLOAT", "FLOAT", 700, -1, 4, "real", "123456.7", "47f1205a"},
    {"1234567::FLOAT", "FLOAT", 700, -1, 4, "real", "1.234567e+06", "4996b438"},
    {"100000::FLOAT", "FLOAT", 700, -1, 4, "real", "100000", "47c35000"},
    {"'-0.0'::FLOAT", "FLOAT", 700, -1, 4, "real", "-0", "80000000"},
    {"'NaN'::FLOAT", "FLOAT", 700, -1, 4, "real", "NaN", "7fc00000"},
    {"'-inf'::FLOAT", "FLOAT", 700, -1, 4, "real", "-Infinity", "ff800000"},
    {"3.4028235e38::FLOAT", "FLOAT", 700, -1, 4, "real", "3.4028235e+38", "7f7fffff"},
    {"1e-45::FLOAT", "FLOAT", 700, -1, 4, "real", "1e-45", "00000001"},
    {"0.1::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "0.1", "3fb999999999999a"},
    {"1e20::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "1e+20", "4415af1d78b58c40"},
    {"1e15::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "1e+15", "430c6bf526340000"},
    {"123456789012345.6::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "123456789012345.6", "42dc12218377de66"},
    {"100000000000000::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "100000000000000", "42d6bcc41e900000"},
    {"123456789012345678::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "1.2345678901234568e+17", "437b69b4ba630f35"},
    {"0.0001::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "0.0001", "3f1a36e2eb1c432d"},
    {"0.00001::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "1e-05", "3ee4f8b588e368f1"},
    {"'-0.0'::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "-0", "8000000000000000"},
    {"'NaN'::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "NaN", "7ff8000000000000"},
    {"'inf'::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "Infinity", "7ff0000000000000"},
    {"'-inf'::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "-Infinity", "fff0000000000000"},
    {"1.7976931348623157e308::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "1.7976931348623157e+308", "7fefffffffffffff"},
    {"5e-324::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "5e-324", "0000000000000001"},
    {"(-2.5)::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "-2.5", "c004000000000000"},
    {"0::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "0", "0000000000000000"},
    // Shortest digits on a bound of the rounding interval: PostgreSQL prints longer ones.
    {"'-6.8659681752636816e+16'::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "-6.8659681752636816e+16", "c36e7db3bca83bb2"},
    {"'5.51e21'::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "5.510000000000001e+21", "4472ab29c5ec4d26"},
    {"'7e22'::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "7.0000000000000004e+22", "44ada56a4b0835c0"},
    {"'1.21636864e+08'::FLOAT", "FLOAT", 700, -1, 4, "real", "1.21636864e+08", "4ce80100"},
    {"'-6.66e9'::FLOAT", "FLOAT", 700, -1, 4, "real", "-6.6599997e+09", "cfc67bc4"},
    {"'2.2250738585072014e-308'::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "2.2250738585072014e-308", "0010000000000000"},
    {"'9007199254740993'::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "9.007199254740992e+15", "4340000000000000"},
    {"1.5::DECIMAL(4,2)", "DECIMAL(4,2)", 1700, 262150, -1, "numeric(4,2)", "1.50", "000200000000000200011388"},
    {"0::DECIMAL(4,2)", "DECIMAL(4,2)", 1700, 262150, -1, "numeric(4,2)", "0.00", "0000000000000002"},
    {"(-0.05)::DECIMAL(4,2)", "DECIMAL(4,2)", 1700, 262150, -1, "numeric(4,2)", "-0.05", "0001ffff4000000201f4"},
    {"0.0001::DECIMAL(10,4)", "DECIMAL(10,4)", 1700, 655368, -1, "numeric(10,4)", "0.0001", "0001ffff000000040001"},
    {"(-12345678901234567890.5)::DECIMAL(38,1)", "DECIMAL(38,1)", 1700, 2490373, -1, "numeric(38,1)", "-12345678901234567890.5", "000600044000000104d2162e23340d801ed21388"},
    {"99999999999999999999999999999999999999::DECIMAL(38,0)", "DECIMAL(38,0)", 1700, 2490372, -1, "numeric(38,0)", "99999999999999999999999999999999999999", "000a0009000000000063270f270f270f270f270f270f270f270f270f"},
    {"(-9999999999999999999.9999999999999999999)::DECIMAL(38,19)", "DECIMAL(38,19)", 1700, 2490391, -1, "numeric(38,19)", "-9999999999999999999.9999999999999999999", "000a00044000001303e7270f270f270f270f270f270f270f270f2706"},
    {"0.00000000000000000000000000000000000001::DECIMAL(38,38)", "DECIMAL(38,38)", 1700, 2490410, -1, "numeric(38,38)", "0.00000000000000000000000000000000000001", "0001fff6000000260064"},
    {"100000000::DECIMAL(18,0)", "DECIMAL(18,0)", 1700, 1179652, -1, "numeric(18,0)", "100000000", "00010002000000000001"},
    {"123456789.123::DECIMAL(18,3)", "DECIMAL(18,3)", 1700, 1179655, -1, "numeric(18,3)", "123456789.123", "0004000200000003000109291a8504ce"},
    {"0.123456789::DECIMAL(9,9)", "DECIMAL(9,9)", 1700, 589837, -1, "numeric(9,9)", "0.123456789", "0003ffff0000000904d2162e2328"},
    {"(-1)::DECIMAL(9,2)", "DECIMAL(9,2)", 1700, 589830, -1, "numeric(9,2)", "-1.00", "00010000400000020001"},
    {"12345.6789::DECIMAL(9,4)", "DECIMAL(9,4)", 1700, 589832, -1, "numeric(9,4)", "12345.6789", "0003000100000004000109291a85"},
    {"''::VARCHAR", "VARCHAR", 25, -1, -1, "text", "", ""},
    {"'hello'::VARCHAR", "VARCHAR", 25, -1, -1, "text", "hello", "68656c6c6f"},
    {"'a string longer than twelve bytes'::VARCHAR", "VARCHAR", 25, -1, -1, "text", "a string longer than twelve bytes", "6120737472696e67206c6f6e676572207468616e207477656c7665206279746573"},
    {"'héllo ✓'::VARCHAR", "VARCHAR", 25, -1, -1, "text", "héllo ✓", "68c3a96c6c6f20e29c93"},
    {"'{\"a\": [1, 2]}'::JSON", "JSON", 114, -1, -1, "json", "{\"a\": [1, 2]}", "7b2261223a205b312c20325d7d"},
    {"'\\x0A\\x0B'::BLOB", "BLOB", 17, -1, -1, "bytea", "\\x0a0b", "0a0b"},
    {"''::BLOB", "BLOB", 17, -1, -1, "bytea", "\\x", ""},
    {"'\\xFFab\\x00'::BLOB", "BLOB", 17, -1, -1, "bytea", "\\xff616200", "ff616200"},
    {"'2024-03-01'::DATE", "DATE", 1082, -1, 4, "date", "2024-03-01", "0000227a"},
    {"'1999-12-31'::DATE", "DATE", 1082, -1, 4, "date", "1999-12-31", "ffffffff"},
    {"'1970-01-01'::DATE", "DATE", 1082, -1, 4, "date", "1970-01-01", "ffffd533"},
    {"'0044-03-15 (BC)'::DATE", "DATE", 1082, -1, 4, "date", "0044-03-15 BC", "fff49d7b"},
    {"'0001-12-31 (BC)'::DATE", "DATE", 1082, -1, 4, "date", "0001-12-31 BC", "fff4dbf8"},
    {"'0001-01-01'::DATE", "DATE", 1082, -1, 4, "date", "0001-01-01", "fff4dbf9"},
    {"'4714-11-24 (BC)'::DATE", "DATE", 1082, -1, 4, "date", "4714-11-24 BC", "ffda97a7"},
    {"'2000-02-29'::DATE", "DATE", 1082, -1, 4, "date", "2000-02-29", "0000003b"},
    {"'1900-03-01'::DATE", "DATE", 1082, -1, 4, "date", "1900-03-01", "ffff718f"},
    {"'99999-12-31'::DATE", "DATE", 1082, -1, 4, "date", "99999-12-31", "02222b64"},
    {"'infinity'::DATE", "DATE", 1082, -1, 4, "date", "infinity", "7fffffff"},
    {"'-infinity'::DATE", "DATE", 1082, -1, 4, "date", "-infinity", "80000000"},
    {"'13:04:05.1234'::TIME", "TIME", 1083, -1, 8, "time without time zone", "13:04:05.1234", "0000000af41b9d48"},
    {"'00:00:00'::TIME", "TIME", 1083, -1, 8, "time without time zone", "00:00:00", "0000000000000000"},
    {"'23:59:59.999999'::TIME", "TIME", 1083, -1, 8, "time without time zone", "23:59:59.999999", "000000141dd75fff"},
    {"'24:00:00'::TIME", "TIME", 1083, -1, 8, "time without time zone", "24:00:00", "000000141dd76000"},
    {"'13:04:05.000001'::TIME", "TIME", 1083, -1, 8, "time without time zone", "13:04:05.000001", "0000000af419bb41"},
    {"'13:04:05+01:30'::TIMETZ", "TIME WITH TIME ZONE", 1266, -1, 12, "time with time zone", "13:04:05+01:30", "0000000af419bb40ffffeae8"},
    {"'13:04:05.5-05'::TIMETZ", "TIME WITH TIME ZONE", 1266, -1, 12, "time with time zone", "13:04:05.5-05", "0000000af4215c6000004650"},
    {"'00:00:00+00'::TIMETZ", "TIME WITH TIME ZONE", 1266, -1, 12, "time with time zone", "00:00:00+00", "000000000000000000000000"},
    {"'13:04:05-01:30:15'::TIMETZ", "TIME WITH TIME ZONE", 1266, -1, 12, "time with time zone", "13:04:05-01:30:15", "0000000af419bb4000001527"},
    {"'2024-03-01 13:04:05.5'::TIMESTAMP", "TIMESTAMP", 1114, -1, 8, "timestamp without time zone", "2024-03-01 13:04:05.5", "0002b597c7851c60"},
    {"'1999-12-31 23:59:59.999999'::TIMESTAMP", "TIMESTAMP", 1114, -1, 8, "timestamp without time zone", "1999-12-31 23:59:59.999999", "ffffffffffffffff"},
    {"'1900-01-01 00:00:00'::TIMESTAMP", "TIMESTAMP", 1114, -1, 8, "timestamp without time zone", "1900-01-01 00:00:00", "fff4c9ee7c0b8000"},
    {"'0044-03-15 (BC) 13:04:05'::TIMESTAMP", "TIMESTAMP", 1114, -1, 8, "timestamp without time zone", "0044-03-15 13:04:05 BC", "ff1af9e9e074db40"},
    {"'infinity'::TIMESTAMP", "TIMESTAMP", 1114, -1, 8, "timestamp without time zone", "infinity", "7fffffffffffffff"},
    {"'-infinity'::TIMESTAMP", "TIMESTAMP", 1114, -1, 8, "timestamp without time zone", "-infinity", "8000000000000000"},
    {"'2024-03-01 13:04:05'::TIMESTAMP_S", "TIMESTAMP_S", 1114, -1, 8, "timestamp without time zone", "2024-03-01 13:04:05", "0002b597c77d7b40"},
    {"'2024-03-01 13:04:05.123'::TIMESTAMP_MS", "TIMESTAMP_MS", 1114, -1, 8, "timestamp without time zone", "2024-03-01 13:04:05.123", "0002b597c77f5bb8"},
    {"'2024-03-01 13:04:05.123456789'::TIMESTAMP_NS", "TIMESTAMP_NS", 1114, -1, 8, "timestamp without time zone", "2024-03-01 13:04:05.123456", "0002b597c77f5d80"},
    {"'1969-12-31 23:59:59.9999997'::TIMESTAMP_NS", "TIMESTAMP_NS", 1114, -1, 8, "timestamp without time zone", "1969-12-31 23:59:59.999999", "fffca2fec4c81fff"},
    {"'2024-03-01 13:04:05.5+00'::TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE", 1184, -1, 8, "timestamp with time zone", "2024-03-01 13:04:05.5+00", "0002b597c7851c60"},
    {"'2024-03-01 13:04:05+05:30'::TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE", 1184, -1, 8, "timestamp with time zone", "2024-03-01 07:34:05+00", "0002b5932b517540"},
    {"'0044-03-15 (BC) 13:04:05+00'::TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE", 1184, -1, 8, "timestamp with time zone", "0044-03-15 13:04:05+00 BC", "ff1af9e9e074db40"},
    {"'infinity'::TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE", 1184, -1, 8, "timestamp with time zone", "infinity", "7fffffffffffffff"},
    {"'-infinity'::TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE", 1184, -1, 8, "timestamp with time zone", "-infinity", "8000000000000000"},
    {"INTERVAL '1 year 2 months 3 days 04:05:06.789'", "INTERVAL", 1186, -1, 16, "interval", "1 year 2 mons 3 days 04:05:06.789", "000000036c97ca88000000030000000e"},
    {"INTERVAL '-1 second'", "INTERVAL", 1186, -1, 16, "interval", "-00:00:01", "fffffffffff0bdc00000000000000000"},
    {"INTERVAL '0 seconds'", "INTERVAL", 1186, -1, 16, "interval", "00:00:00", "00000000000000000000000000000000"},
    {"'-1 year 2 months -3 days 04:05:06.789'::INTERVAL", "INTERVAL", 1186, -1, 16, "interval", "-10 mons -3 days +04:05:06.789", "000000036c97ca88fffffffdfffffff6"},
    {"INTERVAL '1 month'", "INTERVAL", 1186, -1, 16, "interval", "1 mon", "00000000000000000000000000000001"},
    {"INTERVAL '-1 year'", "INTERVAL", 1186, -1, 16, "interval", "-1 years", "000000000000000000000000fffffff4"},
    {"'1 day -1 second'::INTERVAL", "INTERVAL", 1186, -1, 16, "interval", "1 day -00:00:01", "fffffffffff0bdc00000000100000000"},
    {"'-1 day 1 hour'::INTERVAL", "INTERVAL", 1186, -1, 16, "interval", "-1 days +01:00:00", "00000000d693a400ffffffff00000000"},
    {"INTERVAL '100000 hours'", "INTERVAL", 1186, -1, 16, "interval", "100000:00:00", "0001476b081e80000000000000000000"},
    {"'11 months'::INTERVAL", "INTERVAL", 1186, -1, 16, "interval", "11 mons", "0000000000000000000000000000000b"},
    {"'-2 years -3 months'::INTERVAL", "INTERVAL", 1186, -1, 16, "interval", "-2 years -3 mons", "000000000000000000000000ffffffe5"},
    {"'1 day'::INTERVAL", "INTERVAL", 1186, -1, 16, "interval", "1 day", "00000000000000000000000100000000"},
    {"'0.5 seconds'::INTERVAL", "INTERVAL", 1186, -1, 16, "interval", "00:00:00.5", "000000000007a1200000000000000000"},
    {"'-3 days -0.000001 seconds'::INTERVAL", "INTERVAL", 1186, -1, 16, "interval", "-3 days -00:00:00.000001", "fffffffffffffffffffffffd00000000"},
    {"'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::UUID", "UUID", 2950, -1, 16, "uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc999c0b4ef8bb6d6bb9bd380a11"},
    {"'00000000-0000-0000-0000-000000000000'::UUID", "UUID", 2950, -1, 16, "uuid", "00000000-0000-0000-0000-000000000000", "00000000000000000000000000000000"},
    {"'ffffffff-ffff-ffff-ffff-ffffffffffff'::UUID", "UUID", 2950, -1, 16, "uuid", "ffffffff-ffff-ffff-ffff-ffffffffffff", "ffffffffffffffffffffffffffffffff"},
    {"'b'::ENUM('a', 'b')", "ENUM('a', 'b')", 25, -1, -1, "text", "b", "62"},
    {"[1, 2, NULL]::INTEGER[]", "INTEGER[]", 1007, -1, -1, "integer[]", "{1,2,NULL}", "000000010000000100000017000000030000000100000004000000010000000400000002ffffffff"},
    {"[]::INTEGER[]", "INTEGER[]", 1007, -1, -1, "integer[]", "{}", "000000000000000000000017"},
    {"[1, -1]::TINYINT[]", "TINYINT[]", 1005, -1, -1, "smallint[]", "{1,-1}", "000000010000000000000015000000020000000100000002000100000002ffff"},
    {"[9223372036854775807]::BIGINT[]", "BIGINT[]", 1016, -1, -1, "bigint[]", "{9223372036854775807}", "0000000100000000000000140000000100000001000000087fffffffffffffff"},
    {"['a b', 'x\"y', NULL, 'NULL', '', 'a\\b', 'a,b', '{x}', 'nul', 'null', 'tab\tx', 'ok']::VARCHAR[]", "VARCHAR[]", 1009, -1, -1, "text[]", "{\"a b\",\"x\\\"y\",NULL,\"NULL\",\"\",\"a\\\\b\",\"a,b\",\"{x}\",nul,\"null\",\"tab\tx\",ok}", "0000000100000001000000190000000c000000010000000361206200000003782279ffffffff000000044e554c4c0000000000000003615c6200000003612c62000000037b787d000000036e756c000000046e756c6c000000057461620978000000026f6b"},
    {"[1.5, NULL, -0.25]::DECIMAL(4,2)[]", "DECIMAL(4,2)[]", 1231, 262150, -1, "numeric(4,2)[]", "{1.50,NULL,-0.25}", "0000000100000001000006a400000003000000010000000c000200000000000200011388ffffffff0000000a0001ffff4000000209c4"},
    {"['0044-03-15 (BC)'::DATE, '2024-01-01'::DATE, 'infinity'::DATE]", "DATE[]", 1182, -1, -1, "date[]", "{\"0044-03-15 BC\",2024-01-01,infinity}", "00000001000000000000043a000000030000000100000004fff49d7b000000040000223e000000047fffffff"},
    {"[true, false, NULL]", "BOOLEAN[]", 1000, -1, -1, "boolean[]", "{t,f,NULL}", "000000010000000100000010000000030000000100000001010000000100ffffffff"},
    {"['2024-03-01 13:04:05.5'::TIMESTAMP]", "TIMESTAMP[]", 1115, -1, -1, "timestamp without time zone[]", "{\"2024-03-01 13:04:05.5\"}", "00000001000000000000045a0000000100000001000000080002b597c7851c60"},
    {"['2024-03-01 13:04:05.5+00'::TIMESTAMPTZ]", "TIMESTAMP WITH TIME ZONE[]", 1185, -1, -1, "timestamp with time zone[]", "{\"2024-03-01 13:04:05.5+00\"}", "0000000100000000000004a00000000100000001000000080002b597c7851c60"},
    {"['\\x01\\x22'::BLOB, ''::BLOB]", "BLOB[]", 1001, -1, -1, "bytea[]", "{\"\\\\x0122\",\"\\\\x\"}", "000000010000000000000011000000020000000100000002012200000000"},
    {"[INTERVAL '1 day 2 hours', INTERVAL '-1 second']", "INTERVAL[]", 1187, -1, -1, "interval[]", "{\"1 day 02:00:00\",-00:00:01}", "0000000100000000000004a200000002000000010000001000000001ad274800000000010000000000000010fffffffffff0bdc00000000000000000"},
    {"['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::UUID, NULL]", "UUID[]", 2951, -1, -1, "uuid[]", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}", "000000010000000100000b86000000020000000100000010a0eebc999c0b4ef8bb6d6bb9bd380a11ffffffff"},
    {"[0.1::DOUBLE, 'NaN'::DOUBLE, '-inf'::DOUBLE]", "DOUBLE[]", 1022, -1, -1, "double precision[]", "{0.1,NaN,-Infinity}", "0000000100000000000002bd0000000300000001000000083fb999999999999a000000087ff800000000000000000008fff0000000000000"},
    {"[1.5::FLOAT]", "FLOAT[]", 1021, -1, -1, "real[]", "{1.5}", "0000000100000000000002bc0000000100000001000000043fc00000"},
    {"['{\"a\": 1}'::JSON, '[]'::JSON]", "JSON[]", 199, -1, -1, "json[]", "{\"{\\\"a\\\": 1}\",[]}", "0000000100000000000000720000000200000001000000087b2261223a20317d000000025b5d"},
    {"['13:04:05'::TIME]", "TIME[]", 1183, -1, -1, "time without time zone[]", "{13:04:05}", "00000001000000000000043b0000000100000001000000080000000af419bb40"},
    {"[18446744073709551615::UBIGINT]", "UBIGINT[]", 1231, -1, -1, "numeric[]", "{18446744073709551615}", "0000000100000000000006a4000000010000000100000012000500040000000007341a5802e103bb064f"},
    {"[1, 2, 3]::INTEGER[3]", "INTEGER[3]", 1007, -1, -1, "integer[]", "{1,2,3}", "0000000100000000000000170000000300000001000000040000000100000004000000020000000400000003"},
    {"['x y', NULL]::VARCHAR[2]", "VARCHAR[2]", 1009, -1, -1, "text[]", "{\"x y\",NULL}", "000000010000000100000019000000020000000100000003782079ffffffff"},
    {"0.00012345::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "0.00012345", "3f202e4b6ce5dc68"},
    {"123.456::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "123.456", "405edd2f1a9fbe77"},
    {"(-0.00001)::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "-1e-05", "bee4f8b588e368f1"},
    {"999999999999999.9::DOUBLE", "DOUBLE", 701, -1, 8, "double precision", "999999999999999.9", "430c6bf52633ffff"},
    {"0.0001::FLOAT", "FLOAT", 700, -1, 4, "real", "0.0001", "38d1b717"},
    {"999999::FLOAT", "FLOAT", 700, -1, 4, "real", "999999", "497423f0"},
    {"1000000::FLOAT", "FLOAT", 700, -1, 4, "real", "1e+06", "49742400"},
    {"(-0.001)::DECIMAL(18,3)", "DECIMAL(18,3)", 1700, 1179655, -1, "numeric(18,3)", "-0.001", "0001ffff40000003000a"},
    {"1000000000000000000000000000::DECIMAL(38,10)", "DECIMAL(38,10)", 1700, 2490382, -1, "numeric(38,10)", "1000000000000000000000000000.0000000000", "000100060000000a03e8"},
    {"INTERVAL '-100000 hours'", "INTERVAL", 1186, -1, 16, "interval", "-100000:00:00", "fffeb894f7e180000000000000000000"},
    {"'10000-01-01 00:00:00'::TIMESTAMP", "TIMESTAMP", 1114, -1, 8, "timestamp without time zone", "10000-01-01 00:00:00", "0380e70b913b8000"},
    {"['a' || chr(10) || 'b', 'c\\\\d']", "VARCHAR[]", 1009, -1, -1, "text[]", "{\"a\nb\",\"c\\\\\\\\d\"}", "000000010000000000000019000000020000000100000003610a6200000004635c5c64"},
    {"[INTERVAL '1 day', NULL]", "INTERVAL[]", 1187, -1, -1, "interval[]", "{\"1 day\",NULL}", "0000000100000001000004a200000002000000010000001000000000000000000000000100000000ffffffff"},
    {"[[1, 2], [3, NULL]]", "INTEGER[][]", 1007, -1, -1, "integer[]", "{{1,2},{3,NULL}}", kTextOnly},
    {"[['a b'], ['c']]", "VARCHAR[][]", 1009, -1, -1, "text[]", "{{\"a b\"},{c}}", kTextOnly},
};
// clang-format on

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (const char c : bytes) {
    hex += kDigits[static_cast<uint8_t>(c) >> 4];
    hex += kDigits[static_cast<uint8_t>(c) & 15];
  }
  return hex;
}

std::string Unhex(std::string_view hex) {
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return bytes;
}

// One column of the first row of a result, as the encoder sends it.
struct Encoded {
  PgType type;
  bool has_binary = false;
  bool null = false;
  std::string text;
  std::string binary;
};

class ValuesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_EQ(duckdb_open(nullptr, &db_), DuckDBSuccess);
    ASSERT_EQ(duckdb_connect(db_, &connection_), DuckDBSuccess);
  }
  static void TearDownTestSuite() {
    duckdb_disconnect(&connection_);
    duckdb_close(&db_);
  }

  // Encodes every column of the first row of `result` (which it destroys).
  static std::vector<Encoded> EncodeFirstRow(duckdb_result& result) {
    std::vector<ColumnEncoder> columns;
    for (idx_t c = 0; c < duckdb_column_count(&result); ++c) {
      duckdb_logical_type type = duckdb_column_logical_type(&result, c);
      columns.emplace_back(type);
      duckdb_destroy_logical_type(&type);
    }
    duckdb_data_chunk chunk = duckdb_fetch_chunk(result);
    EXPECT_NE(chunk, nullptr);
    std::vector<Encoded> row;
    for (idx_t c = 0; c < columns.size() && chunk != nullptr; ++c) {
      ColumnEncoder& column = columns[c];
      column.Bind(duckdb_data_chunk_get_vector(chunk, c));
      Encoded encoded{column.pg_type(), column.has_binary(), column.IsNull(0), "", ""};
      if (!encoded.null) {
        column.AppendText(0, encoded.text);
        if (encoded.has_binary) column.AppendBinary(0, encoded.binary);
      }
      row.push_back(std::move(encoded));
    }
    if (chunk != nullptr) duckdb_destroy_data_chunk(&chunk);
    duckdb_destroy_result(&result);
    return row;
  }

  static std::vector<Encoded> Query(const std::string& sql) {
    duckdb_result result;
    if (duckdb_query(connection_, sql.c_str(), &result) == DuckDBError) {
      ADD_FAILURE() << sql << ": " << duckdb_result_error(&result);
      duckdb_destroy_result(&result);
      return {};
    }
    return EncodeFirstRow(result);
  }

  static Encoded QueryOne(const std::string& sql) {
    std::vector<Encoded> row = Query(sql);
    return row.empty() ? Encoded{} : row[0];
  }

  // Binds `value` to `SELECT $1::<type>` and encodes the result; "error: ..." when DuckDB
  // refuses it.
  static Encoded BindAndSelect(OwnedValue value, const std::string& type) {
    const std::string sql = "SELECT $1::" + type;
    duckdb_prepared_statement statement;
    Encoded encoded;
    if (duckdb_prepare(connection_, sql.c_str(), &statement) == DuckDBError) {
      encoded.text = std::string("error: ") + duckdb_prepare_error(statement);
    } else if (duckdb_bind_value(statement, 1, value.get()) == DuckDBError) {
      encoded.text = "error: bind";
    } else {
      duckdb_result result;
      if (duckdb_execute_prepared(statement, &result) == DuckDBError) {
        encoded.text = std::string("error: ") + duckdb_result_error(&result);
        duckdb_destroy_result(&result);
      } else {
        std::vector<Encoded> row = EncodeFirstRow(result);
        if (!row.empty()) encoded = row[0];
      }
    }
    duckdb_destroy_prepare(&statement);
    return encoded;
  }

  static duckdb_database db_;
  static duckdb_connection connection_;
};

duckdb_database ValuesTest::db_ = nullptr;
duckdb_connection ValuesTest::connection_ = nullptr;

TEST_F(ValuesTest, TypesTextAndBinaryMatchPostgres) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.duckdb);
    const Encoded encoded = QueryOne(std::string("SELECT ") + c.duckdb);
    EXPECT_EQ(encoded.type.oid, c.oid);
    EXPECT_EQ(encoded.type.modifier, c.modifier);
    EXPECT_EQ(encoded.type.size, c.size);
    EXPECT_EQ(encoded.type.name, c.name);
    ASSERT_FALSE(encoded.null);
    EXPECT_EQ(encoded.text, c.text);
    EXPECT_EQ(encoded.has_binary, c.binary != kTextOnly);
    if (c.binary != kTextOnly) {
      EXPECT_EQ(Hex(encoded.binary), c.binary);
    }
  }
}

TEST_F(ValuesTest, BinaryParametersRoundTrip) {
  for (const Case& c : kCases) {
    if (c.binary == kTextOnly) continue;
    SCOPED_TRACE(c.duckdb);
    const std::string bytes = Unhex(c.binary);
    Result<OwnedValue> value = DecodeValue(bytes, 1, c.oid, "parameter $1");
    ASSERT_TRUE(value.ok()) << value.status().ToString();
    const Encoded encoded = BindAndSelect(std::move(*value), c.duckdb_type);
    EXPECT_EQ(encoded.text, c.text);
    EXPECT_EQ(Hex(encoded.binary), c.binary);
  }
}

TEST_F(ValuesTest, TextParametersRoundTrip) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.duckdb);
    Result<OwnedValue> value = DecodeValue(std::string_view(c.text), 0, c.oid, "parameter $1");
    ASSERT_TRUE(value.ok()) << value.status().ToString();
    const Encoded encoded = BindAndSelect(std::move(*value), c.duckdb_type);
    EXPECT_EQ(encoded.text, c.text);
  }
}

// Random decimals of every scale, through both the 64-bit and the 128-bit storage: the text is
// the literal, and the binary form decodes back to the same value.
TEST_F(ValuesTest, DecimalsOfEveryScaleRoundTrip) {
  std::mt19937_64 random(11);
  for (int i = 0; i < 300; ++i) {
    const int scale = static_cast<int>(random() % 19);
    std::string digits = std::to_string(random() % 1000000000000000000ULL);
    digits.resize(1 + random() % digits.size());
    while (digits.size() <= static_cast<size_t>(scale)) digits.insert(0, "0");
    std::string literal =
        (random() % 2 != 0 && digits.find_first_not_of('0') != std::string::npos) ? "-" : "";
    literal += digits.substr(0, digits.size() - scale);
    if (scale > 0) literal += "." + digits.substr(digits.size() - scale);
    SCOPED_TRACE(literal + " scale " + std::to_string(scale));
    for (const char* width : {"18", "38"}) {
      const std::string type = std::string("DECIMAL(") + width + "," + std::to_string(scale) + ")";
      const Encoded encoded = QueryOne("SELECT '" + literal + "'::" + type);
      EXPECT_EQ(encoded.text, literal);
      Result<OwnedValue> value = DecodeValue(encoded.binary, 1, 1700, "parameter $1");
      ASSERT_TRUE(value.ok()) << value.status().ToString();
      const Encoded again = BindAndSelect(std::move(*value), type);
      EXPECT_EQ(again.text, literal);
      EXPECT_EQ(again.binary, encoded.binary);
    }
  }
}

TEST_F(ValuesTest, NullsAreReportedAndDecoded) {
  const std::vector<Encoded> row =
      Query("SELECT NULL::INTEGER, NULL::VARCHAR, NULL::INTEGER[], NULL::STRUCT(a INTEGER)");
  ASSERT_EQ(row.size(), 4u);
  for (const Encoded& column : row) EXPECT_TRUE(column.null);
  EXPECT_EQ(row[2].type.oid, 1007u);

  Result<OwnedValue> value = DecodeValue(std::nullopt, 1, 23, "parameter $1");
  ASSERT_TRUE(value.ok());
  EXPECT_TRUE(BindAndSelect(std::move(*value), "INTEGER").null);
}

class DecodeTest : public ValuesTest {
 protected:
  static std::string Selected(std::string_view bytes, int16_t format, uint32_t oid,
                              const std::string& type) {
    Result<OwnedValue> value = DecodeValue(bytes, format, oid, "parameter $1");
    if (!value.ok()) return "decode error: " + value.status().ToString();
    const Encoded encoded = BindAndSelect(std::move(*value), type);
    return encoded.null ? "NULL" : encoded.text;
  }

  static void ExpectError(std::string_view bytes, int16_t format, uint32_t oid,
                          const std::string& sqlstate) {
    SCOPED_TRACE(std::string(bytes));
    Result<OwnedValue> value = DecodeValue(bytes, format, oid, "parameter $2");
    ASSERT_FALSE(value.ok());
    const ErrorDetail* detail = GetErrorDetail(value.status());
    ASSERT_NE(detail, nullptr);
    EXPECT_EQ(detail->error_class(), ErrorClass::kBadData);
    EXPECT_EQ(detail->source(), "sqlstate");
    EXPECT_EQ(detail->code(), sqlstate);
    EXPECT_NE(value.status().message().find("parameter $2"), std::string::npos)
        << value.status().message();
  }
};

TEST_F(DecodeTest, BooleanTextFollowsPostgres) {
  EXPECT_EQ(Selected("on", 0, 16, "BOOLEAN"), "t");
  EXPECT_EQ(Selected(" TRUE ", 0, 16, "BOOLEAN"), "t");
  EXPECT_EQ(Selected("ye", 0, 16, "BOOLEAN"), "t");
  EXPECT_EQ(Selected("of", 0, 16, "BOOLEAN"), "f");
  EXPECT_EQ(Selected("0", 0, 16, "BOOLEAN"), "f");
  EXPECT_EQ(Selected("F", 0, 16, "BOOLEAN"), "f");
  ExpectError("o", 0, 16, "22P02");
  ExpectError("maybe", 0, 16, "22P02");
  ExpectError("", 0, 16, "22P02");
}

TEST_F(DecodeTest, ByteaTextHexAndEscapeFormats) {
  EXPECT_EQ(Selected("\\x0a0B", 0, 17, "BLOB"), "\\x0a0b");
  EXPECT_EQ(Selected("\\x 0a 0b", 0, 17, "BLOB"), "\\x0a0b");
  EXPECT_EQ(Selected("a\\\\b\\001\\377", 0, 17, "BLOB"), "\\x615c6201ff");
  EXPECT_EQ(Selected("", 0, 17, "BLOB"), "\\x");
  ExpectError("\\xZZ", 0, 17, "22P02");
  ExpectError("\\x0", 0, 17, "22P02");
  ExpectError("a\\9", 0, 17, "22P02");
}

TEST_F(DecodeTest, DateTimeAndIntervalTextInPostgresForms) {
  EXPECT_EQ(Selected("0044-03-15 13:04:05.5 BC", 0, 1114, "TIMESTAMP"), "0044-03-15 13:04:05.5 BC");
  EXPECT_EQ(Selected("0044-03-15 13:04:05+00 bc", 0, 1184, "TIMESTAMPTZ"),
            "0044-03-15 13:04:05+00 BC");
  EXPECT_EQ(Selected("2024-03-01T13:04:05Z", 0, 1184, "TIMESTAMPTZ"), "2024-03-01 13:04:05+00");
  EXPECT_EQ(Selected("0044-03-15T13:04:05 BC", 0, 1114, "TIMESTAMP"), "0044-03-15 13:04:05 BC");
  EXPECT_EQ(Selected("2024-03-01 13:04:05+05:30", 0, 1184, "TIMESTAMPTZ"),
            "2024-03-01 07:34:05+00");
  EXPECT_EQ(Selected("1 day +04:05:06", 0, 1186, "INTERVAL"), "1 day 04:05:06");
  EXPECT_EQ(Selected("-1 years +2 mons -3 days +00:00:01", 0, 1186, "INTERVAL"),
            "-10 mons -3 days +00:00:01");
  // What DuckDB cannot read is left to it: the bind fails, not the decoding.
  EXPECT_EQ(Selected("not a date", 0, 1082, "DATE").rfind("error: ", 0), 0u);
  EXPECT_EQ(Selected("abc", 0, 23, "INTEGER").rfind("error: ", 0), 0u);
}

TEST_F(DecodeTest, ArrayTextLiterals) {
  EXPECT_EQ(Selected("{1,2,NULL}", 0, 1007, "INTEGER[]"), "{1,2,NULL}");
  EXPECT_EQ(Selected(" { 1 , 2 } ", 0, 1007, "INTEGER[]"), "{1,2}");
  EXPECT_EQ(Selected("[1:2]={1,2}", 0, 1007, "INTEGER[]"), "{1,2}");
  EXPECT_EQ(Selected("{}", 0, 1009, "VARCHAR[]"), "{}");
  EXPECT_EQ(Selected(R"({"a\"b", c\,d , " x ",NULL,"NULL",null x})", 0, 1009, "VARCHAR[]"),
            R"({"a\"b","c,d"," x ",NULL,"NULL","null x"})");
  EXPECT_EQ(Selected(R"({"\\x01",\\x0203})", 0, 1001, "BLOB[]"), R"({"\\x01","\\x0203"})");
  EXPECT_EQ(Selected("{{1,2},{3,NULL}}", 0, 1007, "INTEGER[][]"), "{{1,2},{3,NULL}}");
  EXPECT_EQ(Selected("{t,off}", 0, 1000, "BOOLEAN[]"), "{t,f}");
  ExpectError("{1,2", 0, 1007, "22P02");
  ExpectError("{{1},2}", 0, 1007, "22P02");
  ExpectError("1,2", 0, 1007, "22P02");
  ExpectError("{1,,2}", 0, 1007, "22P02");
  ExpectError(R"({"a)", 0, 1009, "22P02");
}

TEST_F(DecodeTest, BinaryMultiDimensionalArray) {
  // PostgreSQL's '{{1,2},{3,NULL}}'::int4[]
  const std::string bytes = Unhex(
      "00000002000000010000001700000002000000010000000200000001000000040000000100000004000000020000"
      "000400000003ffffffff");
  EXPECT_EQ(Selected(bytes, 1, 1007, "INTEGER[][]"), "{{1,2},{3,NULL}}");
}

TEST_F(DecodeTest, BinaryNumericSpecialValues) {
  EXPECT_EQ(Selected(Unhex("00000000c0000000"), 1, 1700, "DOUBLE"), "NaN");
  EXPECT_EQ(Selected(Unhex("00000000d0000000"), 1, 1700, "DOUBLE"), "Infinity");
  EXPECT_EQ(Selected(Unhex("00000000f0000000"), 1, 1700, "DOUBLE"), "-Infinity");
  // 1e8 with its trailing zero digits left out, and a weight below the first digit.
  EXPECT_EQ(Selected(Unhex("00010002000000000001"), 1, 1700, "VARCHAR"), "100000000");
  EXPECT_EQ(Selected(Unhex("0001fffe000000080001"), 1, 1700, "VARCHAR"), "0.00000001");
  EXPECT_EQ(Selected(Unhex("0000000000000003"), 1, 1700, "VARCHAR"), "0.000");
}

TEST_F(DecodeTest, MalformedBinaryIsAProtocolViolation) {
  ExpectError(Unhex("000001"), 1, 23, "08P01");
  ExpectError(Unhex("0000000000000000ff"), 1, 20, "08P01");
  ExpectError(Unhex("0001000012340000"
                    "0001"),
              1, 1700, "08P01");  // sign
  ExpectError(Unhex("0001000000000000"
                    "2710"),
              1, 1700, "08P01");  // digit 10000
  ExpectError(Unhex("0002000000000000"
                    "0001"),
              1, 1700, "08P01");                             // fewer digits
  ExpectError(Unhex("000100"), 1, 1700, "08P01");            // short header
  ExpectError(Unhex("0000000000004000"), 1, 1700, "08P01");  // scale beyond 0x3fff
  // One dimension of 3 elements, but 2 sent.
  ExpectError(Unhex("00000001000000000000001700000003000000010000000400000001000000040000"
                    "0002"),
              1, 1007, "08P01");
  // Elements of int8 in an int4[].
  ExpectError(Unhex("000000010000000000000014000000010000000100000008000000000000000001"), 1, 1007,
              "08P01");
  // Bytes after the last element.
  ExpectError(Unhex("0000000100000000000000170000000100000001000000040000000100"), 1, 1007,
              "08P01");
  ExpectError(Unhex("000000070000000000000017"), 1, 1007, "08P01");  // 7 dimensions
  ExpectError(Unhex("000000010000000200000017"), 1, 1007, "08P01");  // flags
  ExpectError(Unhex("00000001000000000000001780000000"), 1, 1007, "08P01");
  ExpectError(Unhex("0a0b0c"), 1, 2950, "08P01");
  ExpectError(Unhex("00"), 1, 1186, "08P01");
  ExpectError(Unhex("01"), 1, 99999, "08P01");  // no binary form known
  ExpectError("1", 2, 23, "22023");
  ExpectError("\xff\xfe", 0, 25, "22021");
  ExpectError("\xff\xfe", 1, 25, "22021");
}

TEST_F(DecodeTest, DamagedInputIsAnErrorOrAValueNeverACrash) {
  std::mt19937 random(7);
  auto check = [](std::string_view bytes, int16_t format, uint32_t oid) {
    Result<OwnedValue> value = DecodeValue(bytes, format, oid, "field 1");
    if (value.ok()) {
      EXPECT_NE(value->get(), nullptr);
    } else {
      ASSERT_NE(GetErrorDetail(value.status()), nullptr);
    }
  };
  for (const Case& c : kCases) {
    const std::string valid = c.binary == kTextOnly ? std::string(c.text) : Unhex(c.binary);
    for (size_t cut = 0; cut < valid.size(); ++cut) {
      check(std::string_view(valid).substr(0, cut), 1, c.oid);
      check(std::string_view(c.text).substr(0, std::min(cut, std::strlen(c.text))), 0, c.oid);
    }
    for (int i = 0; i < 50 && !valid.empty(); ++i) {
      std::string damaged = valid;
      damaged[random() % damaged.size()] = static_cast<char>(random());
      check(damaged, 1, c.oid);
      std::string text = c.text;
      if (!text.empty()) text[random() % text.size()] = "{}\\\",x "[random() % 7];
      check(text, 0, c.oid);
    }
  }
}

TEST(DuckDbTypeNameOf, NamesTheDecodedType) {
  EXPECT_EQ(DuckDbTypeNameOf(16), "BOOLEAN");
  EXPECT_EQ(DuckDbTypeNameOf(21), "SMALLINT");
  EXPECT_EQ(DuckDbTypeNameOf(23), "INTEGER");
  EXPECT_EQ(DuckDbTypeNameOf(20), "BIGINT");
  EXPECT_EQ(DuckDbTypeNameOf(700), "FLOAT");
  EXPECT_EQ(DuckDbTypeNameOf(701), "DOUBLE");
  EXPECT_EQ(DuckDbTypeNameOf(1700), "DECIMAL(38,10)");
  EXPECT_EQ(DuckDbTypeNameOf(25), "VARCHAR");
  EXPECT_EQ(DuckDbTypeNameOf(1043), "VARCHAR");
  EXPECT_EQ(DuckDbTypeNameOf(17), "BLOB");
  EXPECT_EQ(DuckDbTypeNameOf(1082), "DATE");
  EXPECT_EQ(DuckDbTypeNameOf(1083), "TIME");
  EXPECT_EQ(DuckDbTypeNameOf(1266), "TIMETZ");
  EXPECT_EQ(DuckDbTypeNameOf(1114), "TIMESTAMP");
  EXPECT_EQ(DuckDbTypeNameOf(1184), "TIMESTAMPTZ");
  EXPECT_EQ(DuckDbTypeNameOf(1186), "INTERVAL");
  EXPECT_EQ(DuckDbTypeNameOf(2950), "UUID");
  EXPECT_EQ(DuckDbTypeNameOf(114), "JSON");
  EXPECT_EQ(DuckDbTypeNameOf(1007), "INTEGER[]");
  EXPECT_EQ(DuckDbTypeNameOf(199), "JSON[]");
  EXPECT_EQ(DuckDbTypeNameOf(1231), "DECIMAL(38,10)[]");
  EXPECT_EQ(DuckDbTypeNameOf(0), "");
  EXPECT_EQ(DuckDbTypeNameOf(99999), "");
}

TEST_F(ValuesTest, OtherTypesAreDuckDbsOwnText) {
  const char* expressions[] = {
      "{'a': 1, 'b': 'x y', 'c': [1, 2], 'd': NULL}",
      "{'a': [{'b': 'c'}]}",
      "MAP {'k': 1, 'k 2': NULL}",
      "MAP {}::MAP(VARCHAR, INTEGER)",
      "union_value(num := 2)::UNION(num INTEGER, s VARCHAR)",
      "union_value(s := 'x')::UNION(num INTEGER, s VARCHAR)",
      "'0101'::BIT",
      "'1'::BIT",
      "12345678901234567890123456789::BIGNUM",
      "(-5)::BIGNUM",
      "0::BIGNUM",
      "'13:04:05.123456789'::TIME_NS",
  };
  for (const char* expression : expressions) {
    SCOPED_TRACE(expression);
    const std::vector<Encoded> row =
        Query(std::string("SELECT v, v::VARCHAR FROM (SELECT ") + expression + " AS v)");
    ASSERT_EQ(row.size(), 2u);
    if (std::string_view(expression).ends_with("TIME_NS")) {
      EXPECT_EQ(row[0].type.oid, 1083u);
      EXPECT_EQ(row[0].text, "13:04:05.123456");
      continue;
    }
    EXPECT_EQ(row[0].type.oid, 25u);
    EXPECT_EQ(row[0].type.name, "text");
    EXPECT_EQ(row[0].text, row[1].text);
    EXPECT_TRUE(row[0].has_binary);
    EXPECT_EQ(row[0].binary, row[1].text);
  }
}

TEST_F(ValuesTest, ListsOfOtherTypesAreTextArrays) {
  const Encoded encoded = QueryOne("SELECT [{'a': 1}, NULL, {'a': NULL}]");
  EXPECT_EQ(encoded.type.oid, 1009u);
  EXPECT_EQ(encoded.type.name, "text[]");
  EXPECT_EQ(encoded.text, R"({"{'a': 1}",NULL,"{'a': NULL}"})");
  EXPECT_EQ(Hex(encoded.binary),
            "0000000100000001000000190000000300000001"
            "000000087b2761273a20317d"
            "ffffffff"
            "0000000b7b2761273a204e554c4c7d");
}

TEST_F(ValuesTest, UnresolvedTypesAreText) {
  for (const duckdb_type id : {DUCKDB_TYPE_INVALID, DUCKDB_TYPE_ANY, DUCKDB_TYPE_SQLNULL}) {
    duckdb_logical_type type = duckdb_create_logical_type(id);
    EXPECT_EQ(PgTypeOf(type).oid, 25u) << id;
    ColumnEncoder encoder(type);
    EXPECT_EQ(encoder.pg_type().name, "text");
    duckdb_destroy_logical_type(&type);
  }
  duckdb_prepared_statement statement;
  ASSERT_EQ(duckdb_prepare(connection_, "SELECT $1", &statement), DuckDBSuccess);
  duckdb_logical_type type = duckdb_param_logical_type(statement, 1);
  EXPECT_EQ(PgTypeOf(type).oid, 25u);
  duckdb_destroy_logical_type(&type);
  duckdb_destroy_prepare(&statement);
}

TEST_F(ValuesTest, VariantNeedsACastInTheQuery) {
  duckdb_result result;
  ASSERT_EQ(
      duckdb_query(connection_, "SELECT 1::VARIANT, [1::VARIANT], {'a': 1::VARIANT}, 1, [{'a': 1}]",
                   &result),
      DuckDBSuccess);
  const bool expected[] = {true, true, true, false, false};
  for (idx_t c = 0; c < 5; ++c) {
    duckdb_logical_type type = duckdb_column_logical_type(&result, c);
    EXPECT_EQ(NeedsVarcharCast(type), expected[c]) << c;
    duckdb_destroy_logical_type(&type);
  }
  duckdb_destroy_result(&result);
}

TEST_F(ValuesTest, GeometryIsSentAsItsWkb) {
  const Encoded encoded = QueryOne("SELECT 'POINT(1 2)'::GEOMETRY");
  EXPECT_EQ(encoded.type.oid, 17u);
  EXPECT_EQ(encoded.text, "\\x0101000000000000000000f03f0000000000000040");
}

// Parses DataRow messages back into (column count, fields), a field being "NULL" or its bytes.
std::vector<std::vector<std::string>> ParseDataRows(std::string_view bytes) {
  auto be32 = [](std::string_view b, size_t at) {
    return (uint32_t{static_cast<uint8_t>(b[at])} << 24) |
           (uint32_t{static_cast<uint8_t>(b[at + 1])} << 16) |
           (uint32_t{static_cast<uint8_t>(b[at + 2])} << 8) | static_cast<uint8_t>(b[at + 3]);
  };
  std::vector<std::vector<std::string>> rows;
  size_t pos = 0;
  while (pos < bytes.size()) {
    EXPECT_EQ(bytes[pos], 'D');
    const size_t end = pos + 1 + be32(bytes, pos + 1);
    const int count =
        (static_cast<uint8_t>(bytes[pos + 5]) << 8) | static_cast<uint8_t>(bytes[pos + 6]);
    size_t at = pos + 7;
    std::vector<std::string> fields;
    for (int c = 0; c < count; ++c) {
      const uint32_t length = be32(bytes, at);
      at += 4;
      if (length == 0xFFFFFFFFu) {
        fields.emplace_back("NULL");
      } else {
        fields.emplace_back(bytes.substr(at, length));
        at += length;
      }
    }
    EXPECT_EQ(at, end);
    rows.push_back(std::move(fields));
    pos = end;
  }
  return rows;
}

TEST_F(ValuesTest, DataRowsAreCompleteMessages) {
  duckdb_result result;
  ASSERT_EQ(
      duckdb_query(connection_,
                   "SELECT i::INTEGER, 'x' || i, CASE WHEN i = 1 THEN NULL ELSE 2.5 END::DOUBLE,"
                   " [[i]] FROM range(3) t(i)",
                   &result),
      DuckDBSuccess);
  std::vector<ColumnEncoder> columns;
  for (idx_t c = 0; c < duckdb_column_count(&result); ++c) {
    duckdb_logical_type type = duckdb_column_logical_type(&result, c);
    columns.emplace_back(type);
    duckdb_destroy_logical_type(&type);
  }
  duckdb_data_chunk chunk = duckdb_fetch_chunk(result);
  ASSERT_NE(chunk, nullptr);
  std::string out = "prefix";
  // Binary asked for every column; the nested list has no binary form and goes as text.
  AppendDataRows(columns, {true, false, true, true}, chunk, 0, 2, out);
  // 'D', length, column count, then each column's length (-1 for NULL) and bytes.
  // clang-format off
  EXPECT_EQ(Hex(out.substr(6)),
            "44" "00000029" "0004" "00000004" "00000000" "00000002" "7830"
                 "00000008" "4004000000000000" "00000005" "7b7b307d7d"
            "44" "00000021" "0004" "00000004" "00000001" "00000002" "7831"
                 "ffffffff" "00000005" "7b7b317d7d");
  // clang-format on
  out.clear();
  AppendDataRows(columns, {false, false, false, false}, chunk, 2, 3, out);
  EXPECT_EQ(ParseDataRows(out),
            (std::vector<std::vector<std::string>>{{"2", "x2", "2.5", "{{2}}"}}));
  duckdb_destroy_data_chunk(&chunk);
  duckdb_destroy_result(&result);
}

// Constant and repeated values across rows (DuckDB hands the C API flat vectors).
TEST_F(ValuesTest, DataRowsOfConstants) {
  duckdb_result result;
  ASSERT_EQ(duckdb_query(connection_,
                         "SELECT 42, 'a long constant string', [1, 2], NULL::INTEGER, "
                         "{'k': range % 2} FROM range(3000)",
                         &result),
            DuckDBSuccess);
  std::vector<ColumnEncoder> columns;
  for (idx_t c = 0; c < duckdb_column_count(&result); ++c) {
    duckdb_logical_type type = duckdb_column_logical_type(&result, c);
    columns.emplace_back(type);
    duckdb_destroy_logical_type(&type);
  }
  std::string out;
  while (duckdb_data_chunk chunk = duckdb_fetch_chunk(result)) {
    AppendDataRows(columns, {}, chunk, 0, duckdb_data_chunk_get_size(chunk), out);
    duckdb_destroy_data_chunk(&chunk);
  }
  duckdb_destroy_result(&result);
  const auto rows = ParseDataRows(out);
  ASSERT_EQ(rows.size(), 3000u);
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i], (std::vector<std::string>{"42", "a long constant string", "{1,2}", "NULL",
                                                 i % 2 == 0 ? "{'k': 0}" : "{'k': 1}"}));
  }
}

TEST_F(ValuesTest, DataRowsAcrossChunks) {
  duckdb_result result;
  ASSERT_EQ(
      duckdb_query(connection_, "SELECT range::BIGINT, range::VARCHAR FROM range(5000)", &result),
      DuckDBSuccess);
  std::vector<ColumnEncoder> columns;
  for (idx_t c = 0; c < 2; ++c) {
    duckdb_logical_type type = duckdb_column_logical_type(&result, c);
    columns.emplace_back(type);
    duckdb_destroy_logical_type(&type);
  }
  std::string out;
  while (duckdb_data_chunk chunk = duckdb_fetch_chunk(result)) {
    AppendDataRows(columns, {false, true}, chunk, 0, duckdb_data_chunk_get_size(chunk), out);
    duckdb_destroy_data_chunk(&chunk);
  }
  duckdb_destroy_result(&result);
  const auto rows = ParseDataRows(out);
  ASSERT_EQ(rows.size(), 5000u);
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i], (std::vector<std::string>{std::to_string(i), std::to_string(i)}));
  }
}

}  // namespace
}  // namespace weir::serve
