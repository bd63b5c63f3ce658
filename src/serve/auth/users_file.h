// The users file of `weir serve` (`<serve.tls_dir>/users`): one line per user,
// `NAME SCRAM-SHA-256$<iterations>:<salt>$<stored key>:<server key> [read|write]` (role
// write when absent), never a password. Blank lines and lines starting with `#` are ignored;
// any other line that is not of that form is an error naming the file and the line number.
//
// Writing never exposes a verifier to other users, even for a moment: the new content goes to
// a temporary file created with mode 0600 in the same directory, is fsynced and renamed over
// the old file (then the directory is fsynced), so a reader sees the old file or the new one,
// whole.
//
// Threading: free functions, callable from any thread; concurrent writers of one file are not
// coordinated (the last rename wins).
#pragma once

#include <map>
#include <string>

#include "base/status.h"
#include "serve/auth/scram.h"

namespace weir::serve::auth {

struct UserEntry {
  ScramVerifier verifier;
  std::string role = "write";  // read | write
};
using Users = std::map<std::string, UserEntry>;

// Parses a users file's text; `path` names it in errors ("<path>, line <n>: ...").
Result<Users> ParseUsers(const std::string& text, const std::string& path);
// Reads and parses the file at `path` (which must exist).
Result<Users> ReadUsersFile(const std::string& path);
// Replaces the file at `path` with `users` (temporary file 0600, fsync, rename).
Status WriteUsersFile(const std::string& path, const Users& users);

}  // namespace weir::serve::auth
