// The weir binary: one process, one subcommand.
#include <iostream>
#include <string>
#include <vector>

#include "app/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return weir::app::RunCli(args, std::cout, std::cerr);
}
