// `weir ingest --from FILE...`: the files identified (standard input spooled first), the dataset
// they feed chosen, and the pipeline's record source set to the file source (src/filesource).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "filesource/source_file.h"
#include "ingest/pipeline.h"

namespace weir::app {

// What must live as long as the pipeline runs (the stdin spool, deleted at the end).
struct FileSourceRun {
  std::optional<filesource::SpooledStdin> spooled_stdin;
  std::vector<filesource::SourceFile> files;
};

// Keeps only the dataset the files feed (`dataset`, or the only one configured) in `options`
// and makes the file source its record source. A missing or unreadable file, "-" twice, or two
// files of the same content are errors naming them.
Result<std::unique_ptr<FileSourceRun>> PrepareFileSource(const std::vector<std::string>& from,
                                                         const std::string& dataset,
                                                         ingest::PipelineOptions* options);

}  // namespace weir::app
