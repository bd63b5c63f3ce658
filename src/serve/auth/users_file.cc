#include "serve/auth/users_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/scoped_fd.h"

namespace weir::serve::auth {
namespace {

Status FileError(const std::string& path, const std::string& what) {
  return ClassifiedError(ErrorClass::kFatal, "os", "users_file",
                         fmt::format("users file {}: {}: {}", path, what, std::strerror(errno)));
}

bool IsUserName(const std::string& name) {
  for (const char c : name) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return false;
  }
  return !name.empty();
}

// Writes all of `bytes` to `fd`; false with errno set otherwise.
bool WriteAll(int fd, const std::string& bytes) {
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Result<Users> ParseUsers(const std::string& text, const std::string& path) {
  Users users;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    std::istringstream fields(line);
    std::vector<std::string> words;
    for (std::string word; fields >> word;) words.push_back(word);
    if (words.empty() || words[0][0] == '#') continue;
    const auto malformed = [&](const std::string& why) {
      return Status::Invalid(
          fmt::format("users file {}, line {}: {} (expected \"NAME "
                      "SCRAM-SHA-256$... [read|write]\")",
                      path, number, why));
    };
    if (words.size() < 2) return malformed(fmt::format("user {} has no verifier", words[0]));
    if (words.size() > 3) return malformed(fmt::format("{} fields, not 2 or 3", words.size()));
    const std::string role = words.size() == 3 ? words[2] : "write";
    if (role != "read" && role != "write") {
      return malformed(
          fmt::format("role of user {} must be read or write, not \"{}\"", words[0], role));
    }
    auto verifier = ParseVerifier(words[1]);
    if (!verifier.ok()) {
      return malformed(
          fmt::format("verifier of user {}: {}", words[0], verifier.status().message()));
    }
    if (!users.emplace(words[0], UserEntry{*verifier, role}).second) {
      return malformed(fmt::format("user {} is listed twice", words[0]));
    }
  }
  return users;
}

Result<Users> ReadUsersFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return FileError(path, "cannot open");
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) return FileError(path, "cannot read");
  return ParseUsers(text.str(), path);
}

Status WriteUsersFile(const std::string& path, const Users& users) {
  std::string text;
  for (const auto& [name, user] : users) {
    if (!IsUserName(name)) {
      return Status::Invalid(
          fmt::format("users file {}: the user name \"{}\" is empty or has "
                      "spaces or control characters",
                      path, name));
    }
    text += name + " " + ToString(user.verifier) + " " + user.role + "\n";
  }
  std::string temporary = path + ".tmp-XXXXXX";
  ScopedFd fd(::mkostemp(temporary.data(), O_CLOEXEC));  // mode 0600, before any byte
  if (!fd.valid()) return FileError(temporary, "cannot create");
  const auto fail = [&](const char* what) {
    const Status status = FileError(temporary, what);
    fd.Reset();
    ::unlink(temporary.c_str());
    return status;
  };
  if (::fchmod(fd.get(), 0600) != 0) return fail("cannot set mode 0600");
  if (!WriteAll(fd.get(), text)) return fail("cannot write");
  if (::fsync(fd.get()) != 0) return fail("cannot fsync");
  if (fd.Close() != 0) {
    const Status status = FileError(temporary, "cannot close");
    ::unlink(temporary.c_str());
    return status;
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const Status status = FileError(path, "cannot rename " + temporary + " to it");
    ::unlink(temporary.c_str());
    return status;
  }
  // The rename itself is durable once the directory is.
  std::string directory = std::filesystem::path(path).parent_path().string();
  if (directory.empty()) directory = ".";
  const ScopedFd dir_fd(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd.valid()) return FileError(directory, "cannot open the directory to fsync it");
  if (::fsync(dir_fd.get()) != 0) return FileError(directory, "cannot fsync the directory");
  return Status::OK();
}

}  // namespace weir::serve::auth
