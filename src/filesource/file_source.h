// The file source of `weir ingest --from FILE...`: the lines of each file, in the order given,
// as records of the ledger topic `file:<sha256>` partition 0 with the line's uncompressed byte
// offset as its offset, through the same pipeline, tables and rejects as Kafka records
// (ingest::RecordSource). Where each file starts is the offset ledger's answer; a file the
// ledger has seen to its end yields nothing. The source is exhausted when every file is read
// to its end; the pipeline then flushes, commits and returns.
//
// Progress: on a terminal, one line rewritten in place (bytes read of the total, events/s,
// ETA); otherwise one log line per lake commit (the pipeline's commit line is the other).
//
// Threading: the pipeline's poll thread only.
#pragma once

#include <memory>
#include <vector>

#include "filesource/source_file.h"
#include "ingest/record_source.h"

namespace weir::filesource {

struct FileSourceOptions {
  size_t max_line_bytes = 1 << 20;  // the dataset's max_record_bytes: longer lines are rejected
  bool terminal_progress = false;   // draw the progress line on stderr
};

Result<std::unique_ptr<ingest::RecordSource>> MakeFileSource(std::vector<SourceFile> files,
                                                             FileSourceOptions options,
                                                             kafka::AssignmentListener* listener);

}  // namespace weir::filesource
