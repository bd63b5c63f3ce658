// `weir check`: validates the settings of `weir ingest` and probes what it depends on (each
// dataset's topic on the brokers, the catalog, the storage) in parallel, each under
// check.timeout, changing nothing: a catalog or local data directory that does not exist yet
// is reported as "would be created on first write", and the storage marker is always deleted.
#pragma once

#include <ostream>

#include "app/ingest_command.h"

namespace weir::app {

// Prints the settings and one line per probe to `out`; a failure summary to `err`. Returns
// kExitOk when every probe passed, kExitFailure otherwise.
int RunCheck(const IngestArgs& args, std::ostream& out, std::ostream& err);

}  // namespace weir::app
