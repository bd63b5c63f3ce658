// The weir binary: one process, one subcommand.
#include <iostream>
#include <string>
#include <vector>

#include <arrow/filesystem/s3fs.h>

#include "app/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const int code = weir::app::RunCli(args, std::cout, std::cerr);
  // Every S3 client is gone once the subcommand returns; the AWS SDK must be shut down before
  // static destruction or it crashes at exit.
  (void)arrow::fs::EnsureS3Finalized();
  return code;
}
