// PostgreSQL's view of DuckDB values: the type (OID, length, modifier, name) a DuckDB type is
// presented as, the text and binary wire formats of result values read straight from DuckDB
// vectors, and the decoding of parameters and COPY fields sent by clients.
//
// Threading: ColumnEncoder is used by one session thread; the free functions are pure.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <duckdb.h>

#include "base/status.h"
#include "lake/duckdb_handles.h"

namespace weir::serve {

// The PostgreSQL type a DuckDB type is presented as.
struct PgType {
  uint32_t oid = 25;      // pg_type.oid, e.g. 23 int4, 1007 int4[]
  int16_t size = -1;      // pg_type.typlen (-1 variable)
  int32_t modifier = -1;  // atttypmod (numeric precision and scale)
  std::string name;       // format_type(): "integer", "numeric(18,3)", "integer[]"
};
PgType PgTypeOf(duckdb_logical_type type);

// The DuckDB type name a PostgreSQL type OID is decoded to ("" when unknown: sent as text).
std::string DuckDbTypeNameOf(uint32_t oid);

// Whether a column of this type must be cast to VARCHAR in the query to be shown: the C API
// cannot rebuild its values from vectors for DuckDB to render (VARIANT, also nested), and the
// encoder would send them as empty text.
bool NeedsVarcharCast(duckdb_logical_type type);

class TimeZone;

// The session settings that change how values are written as text (the binary formats do not
// depend on them): TimeZone for timestamptz (UTC when null), extra_float_digits for float4
// and float8 (> 0: the shortest exact digits; <= 0: FLT_DIG/DBL_DIG plus it, as %g).
struct OutputSettings {
  const TimeZone* time_zone = nullptr;  // must outlive the encoders
  int extra_float_digits = 1;
};

// Encodes the values of one result column, chunk after chunk.
class ColumnEncoder {
 public:
  // The type is copied, not owned.
  explicit ColumnEncoder(duckdb_logical_type type, const OutputSettings& output = {});
  ~ColumnEncoder();
  ColumnEncoder(ColumnEncoder&&) noexcept;
  ColumnEncoder& operator=(ColumnEncoder&&) noexcept;

  const PgType& pg_type() const;
  // Whether the binary format exists for this column; if not, it is sent as text even when
  // the client asks for binary (and RowDescription says so).
  bool has_binary() const;
  // Points the encoder at this column's vector of the next chunk (valid until the chunk is
  // destroyed).
  void Bind(duckdb_vector vector);
  bool IsNull(idx_t row) const;
  // Appends the value at `row` (not null) in PostgreSQL's text output format.
  void AppendText(idx_t row, std::string& out) const;
  // Appends the value at `row` (not null) in PostgreSQL's binary format (has_binary()).
  void AppendBinary(idx_t row, std::string& out) const;

 private:
  friend void AppendDataRows(std::vector<ColumnEncoder>& columns, const std::vector<bool>& binary,
                             duckdb_data_chunk chunk, idx_t begin, idx_t end, std::string& out);

  struct State;
  std::unique_ptr<State> state_;
};

// Binds each column to its vector of `chunk`, then appends one DataRow message ('D') per row in
// [begin, end); `binary[c]` says whether column c goes in binary (only where has_binary(); a
// missing entry is text).
void AppendDataRows(std::vector<ColumnEncoder>& columns, const std::vector<bool>& binary,
                    duckdb_data_chunk chunk, idx_t begin, idx_t end, std::string& out);

using OwnedValue = lake::DuckDbValue;

// Decodes a value sent by a client (a Bind parameter, a COPY field) for type `oid`: format 0
// is PostgreSQL's text format, 1 binary; nullopt gives a NULL value. Text becomes a VARCHAR value
// that DuckDB casts (rewritten where DuckDB reads PostgreSQL's output differently: BC dates,
// "+" in intervals), except bytea (BLOB), boolean and arrays (LIST values). Malformed input is
// 22P02 (text: bytea, boolean, array literals; other text DuckDB cannot read fails when bound) or
// 08P01 (binary), invalid UTF-8 22021, an out-of-range date or time 22008, the message naming
// `what` (e.g. "parameter $2").
Result<OwnedValue> DecodeValue(std::optional<std::string_view> bytes, int16_t format, uint32_t oid,
                               std::string_view what);

}  // namespace weir::serve
