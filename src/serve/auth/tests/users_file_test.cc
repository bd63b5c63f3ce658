#include "serve/auth/users_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace weir::serve::auth {
namespace {

class UsersFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("weir-users-file-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "users").string();
    auto made = MakeVerifierWithSalt("secret", "0123456789abcdef", 4096);
    ASSERT_TRUE(made.ok()) << made.status().message();
    verifier_ = ToString(*made);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  mode_t Mode() const {
    struct stat info {};
    EXPECT_EQ(::stat(path_.c_str(), &info), 0);
    return info.st_mode & 0777;
  }
  std::string Text() const {
    std::ifstream in(path_);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
  }
  // The error of parsing `text` as a users file (empty when it parses).
  std::string ErrorOf(const std::string& text) {
    auto parsed = ParseUsers(text, "/tls/users");
    return parsed.ok() ? "" : parsed.status().message();
  }

  std::filesystem::path dir_;
  std::string path_;
  std::string verifier_;
};

TEST_F(UsersFileTest, WritesAndReadsBackEveryUserWithItsRole) {
  Users users;
  users["weir"] = UserEntry{*ParseVerifier(verifier_), "write"};
  users["reader"] = UserEntry{*ParseVerifier(verifier_), "read"};
  ASSERT_TRUE(WriteUsersFile(path_, users).ok());
  EXPECT_EQ(Text(), "reader " + verifier_ + " read\nweir " + verifier_ + " write\n");
  auto read = ReadUsersFile(path_);
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ(read->at("reader").role, "read");
  EXPECT_EQ(read->at("weir").role, "write");
  EXPECT_EQ(read->at("weir").verifier, *ParseVerifier(verifier_));
}

TEST_F(UsersFileTest, TheFileIsMode0600WhateverTheUmaskAndAnOlderFileIsReplacedNotRewritten) {
  {
    std::ofstream older(path_);
    older << "old " << verifier_ << "\n";
  }
  ::chmod(path_.c_str(), 0644);
  struct stat before {};
  ASSERT_EQ(::stat(path_.c_str(), &before), 0);
  const mode_t umask_was = ::umask(0);
  Users users;
  users["weir"] = UserEntry{*ParseVerifier(verifier_), "write"};
  const Status written = WriteUsersFile(path_, users);
  ::umask(umask_was);
  ASSERT_TRUE(written.ok()) << written.message();
  EXPECT_EQ(Mode(), 0600u);
  struct stat after {};
  ASSERT_EQ(::stat(path_.c_str(), &after), 0);
  // A new inode: the world-readable file was never opened for the new secrets.
  EXPECT_NE(after.st_ino, before.st_ino);
  EXPECT_EQ(Text(), "weir " + verifier_ + " write\n");
  // Only the file itself: no temporary left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_),
                          std::filesystem::directory_iterator()),
            1);
}

TEST_F(UsersFileTest, AWriteThatFailsLeavesTheOldFileAndNoTemporary) {
  const std::string missing = (dir_ / "no-such-dir" / "users").string();
  Users users;
  users["weir"] = UserEntry{*ParseVerifier(verifier_), "write"};
  const Status written = WriteUsersFile(missing, users);
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.message().find("cannot create"), std::string::npos) << written.message();
  users["bad name"] = UserEntry{*ParseVerifier(verifier_), "write"};
  const Status refused = WriteUsersFile(path_, users);
  EXPECT_EQ(refused.message(), "users file " + path_ +
                                   ": the user name \"bad name\" is empty or has spaces or "
                                   "control characters");
  EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST_F(UsersFileTest, BlankAndCommentLinesAreSkippedAndTheRoleDefaultsToWrite) {
  auto parsed = ParseUsers("\n# the admin\n  \nweir " + verifier_ + "\n", "/tls/users");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ(parsed->at("weir").role, "write");
}

TEST_F(UsersFileTest, AMalformedLineNamesTheFileAndTheLineNumber) {
  const std::string expected = " (expected \"NAME SCRAM-SHA-256$... [read|write]\")";
  EXPECT_EQ(ErrorOf("weir " + verifier_ + "\nlonely\n"),
            "users file /tls/users, line 2: user lonely has no verifier" + expected);
  EXPECT_EQ(ErrorOf("\n\nweir " + verifier_ + " write extra\n"),
            "users file /tls/users, line 3: 4 fields, not 2 or 3" + expected);
  EXPECT_EQ(ErrorOf("weir " + verifier_ + " admin\n"),
            "users file /tls/users, line 1: role of user weir must be read or write, not "
            "\"admin\"" +
                expected);
  EXPECT_EQ(ErrorOf("weir " + verifier_ + "\nweir " + verifier_ + " read\n"),
            "users file /tls/users, line 2: user weir is listed twice" + expected);
  const std::string bad_verifier = ErrorOf("weir md5abcdef\n");
  EXPECT_EQ(bad_verifier.rfind("users file /tls/users, line 1: verifier of user weir: ", 0), 0u)
      << bad_verifier;
}

}  // namespace
}  // namespace weir::serve::auth
