#include "app/file_source_setup.h"

#include <unistd.h>

#include <filesystem>
#include <map>

#include <spdlog/spdlog.h>

#include "filesource/file_source.h"

namespace weir::app {

Result<std::unique_ptr<FileSourceRun>> PrepareFileSource(const std::vector<std::string>& from,
                                                         const std::string& dataset,
                                                         ingest::PipelineOptions* options) {
  auto& datasets = options->datasets;
  auto chosen = datasets.begin();
  if (!dataset.empty()) {
    chosen = std::find_if(datasets.begin(), datasets.end(),
                          [&](const auto& d) { return d.config.name == dataset; });
    if (chosen == datasets.end()) {
      std::string names;
      for (const auto& d : datasets) names += (names.empty() ? "" : ", ") + d.config.name;
      return Status::Invalid("--dataset ", dataset, ": no such dataset (configured: ", names, ")");
    }
  } else if (datasets.size() != 1) {
    std::string names;
    for (const auto& d : datasets) names += (names.empty() ? "" : ", ") + d.config.name;
    return Status::Invalid("--from with ", datasets.size(),
                           " datasets configured: name the one the files feed with --dataset (",
                           names, ")");
  }
  ingest::DatasetOptions target = std::move(*chosen);
  datasets.clear();

  auto run = std::make_unique<FileSourceRun>();
  std::map<std::string, std::string> seen;  // sha256 → name
  for (const auto& path : from) {
    filesource::SourceFile file;
    if (path == "-") {
      if (run->spooled_stdin) return Status::Invalid("--from -: standard input given twice");
      std::error_code error;
      const auto directory = std::filesystem::temp_directory_path(error);
      spdlog::info("--from -: spooling standard input under {} (it is identified by its hash)",
                   error ? "/tmp" : directory.string());
      WEIR_ASSIGN_OR_RAISE(auto spooled, filesource::SpooledStdin::Make(
                                             STDIN_FILENO, error ? "/tmp" : directory.string()));
      run->spooled_stdin.emplace(std::move(spooled));
      file = run->spooled_stdin->file();
    } else {
      WEIR_ASSIGN_OR_RAISE(file, filesource::IdentifyFile(path));
    }
    if (auto [at, fresh] = seen.emplace(file.sha256, file.name); !fresh) {
      return Status::Invalid("--from ", file.name, ": the same content as ", at->second,
                             " (a file is identified by its content; give it once)");
    }
    spdlog::info("--from {}: {} bytes, {}, sha256 {} (ledger topic {})", file.name, file.size,
                 filesource::ToString(file.compression), file.sha256, file.LedgerTopic());
    target.source_topics.push_back(file.LedgerTopic());
    run->files.push_back(std::move(file));
  }
  filesource::FileSourceOptions source_options;
  source_options.max_line_bytes = target.decode.max_record_bytes;
  source_options.terminal_progress = isatty(STDERR_FILENO) == 1;
  datasets.push_back(std::move(target));
  const auto files = run->files;
  options->source = [files, source_options](kafka::AssignmentListener* listener) {
    return filesource::MakeFileSource(files, source_options, listener);
  };
  return run;
}

}  // namespace weir::app
