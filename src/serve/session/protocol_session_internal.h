// Private to ProtocolSession's files: the portal state and the small helpers they share.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "serve/engine.h"
#include "serve/pgwire/protocol.h"
#include "serve/session/commands.h"
#include "serve/session/protocol_session.h"
#include "serve/values/values.h"

namespace weir::serve {

inline constexpr size_t kFlushBytes = 256 << 10;  // results go to the socket in such slices

using pgwire::SqlStateOf;
Status SqlError(const char* sqlstate, std::string message);

// A bound statement, or a cursor, part-way through its result.
struct ProtocolSession::Portal {
  std::string statement;                // prepared statement it was bound from
  std::vector<OwnedValue> parameters;   // decoded Bind values
  std::vector<int16_t> result_formats;  // Bind's result formats
  std::optional<Command> command;       // a server command (DECLARE, FETCH, ...) bound in Bind
  bool parameters_bound = false;        // a DECLARE whose query was prepared as `statement`
  bool cursor = false;                  // declared with DECLARE
  bool hold = false;                    // WITH HOLD: survives the end of its transaction
  bool binary_cursor = false;           // DECLARE BINARY
  bool done = false;                    // its CommandComplete was sent
  std::unique_ptr<ResultStream> stream;
  std::vector<ColumnEncoder> encoders;
  std::vector<bool> binary;
  DataChunk chunk;
  idx_t chunk_rows = 0;
  idx_t next_row = 0;
};

}  // namespace weir::serve
