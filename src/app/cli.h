// The `weir` command line: subcommands, --help and --version.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace weir::app {

// Exit codes of the weir binary.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;         // a run failed (the message says why)
inline constexpr int kExitUsage = 2;           // bad command line
inline constexpr int kExitNotImplemented = 3;  // a subcommand this build does not have yet

// Parses `args` (without the program name) and runs the chosen subcommand. Help, version and
// errors go to `out`/`err`. Returns the process exit code.
int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// "weir <version>" followed by the versions of the libraries linked in at run time.
std::string VersionText();

}  // namespace weir::app
