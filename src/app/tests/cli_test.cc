#include "app/cli.h"

#include <set>

#include <sstream>

#include <gtest/gtest.h>

#include "app/version.h"

namespace weir::app {
namespace {

struct Outcome {
  int code;
  std::string out;
  std::string err;
};

Outcome Invoke(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int code = RunCli(args, out, err);
  return {code, out.str(), err.str()};
}

TEST(CliTest, HelpListsEverySubcommandWithItsDescription) {
  const Outcome run = Invoke({"--help"});
  EXPECT_EQ(run.code, kExitOk);
  for (const char* line :
       {"ingest", "Consume Kafka topics", "serve", "PostgreSQL wire protocol", "maintain",
        "Compact files", "wal", "write-ahead log", "check", "Validate a configuration"}) {
    EXPECT_NE(run.out.find(line), std::string::npos) << line << "\n" << run.out;
  }
}

TEST(CliTest, VersionNamesWeirAndItsLibraries) {
  const Outcome run = Invoke({"--version"});
  EXPECT_EQ(run.code, kExitOk);
  EXPECT_EQ(run.out.rfind("weir 0.1.0", 0), 0u) << run.out;
  EXPECT_NE(run.out.find("DuckDB v1.5.5"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("Arrow 26.0.1"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("librdkafka 2."), std::string::npos) << run.out;
}

TEST(CliTest, VersionNamesTheKindOfBuildNotCMakesBuildType) {
  const std::set<std::string> names = {"debug", "release", "asan"};
  EXPECT_EQ(names.count(kBuildName), 1u) << kBuildName;
  const Outcome run = Invoke({"--version"});
  EXPECT_EQ(run.out.substr(0, run.out.find('\n')),
            std::string("weir ") + kVersion + " (" + kBuildName + ")");
}

TEST(CliTest, WalRefusesAnUnknownAction) {
  const Outcome run = Invoke({"wal", "replay"});
  EXPECT_EQ(run.code, kExitUsage);
  EXPECT_NE(run.err.find("replay"), std::string::npos) << run.err;
}

TEST(CliTest, MaintainRefusesAnUnknownActionAndABadWindow) {
  EXPECT_EQ(Invoke({"maintain", "shrink"}).code, kExitUsage);
  const Outcome window = Invoke({"maintain", "orphans", "--dry-run", "--older-than", "soon"});
  EXPECT_EQ(window.code, kExitUsage);
  EXPECT_NE(window.err.find("--older-than soon"), std::string::npos) << window.err;
}

TEST(CliTest, IngestCheckAndMaintainRefuseAMissingConfigFileNamingIt) {
  for (const char* sub : {"ingest", "check", "maintain", "wal"}) {
    const Outcome run = Invoke({sub, "--config", "/nonexistent/weir.yaml"});
    EXPECT_EQ(run.code, kExitFailure) << sub;
    EXPECT_NE(run.err.find("/nonexistent/weir.yaml"), std::string::npos) << run.err;
  }
}

TEST(CliTest, SetNeedsNameEqualsValue) {
  const Outcome run = Invoke({"check", "--set", "flush.interval"});
  EXPECT_EQ(run.code, kExitUsage);
  EXPECT_NE(run.err.find("--set flush.interval"), std::string::npos) << run.err;
}

TEST(CliTest, UnknownSubcommandIsAUsageError) {
  const Outcome run = Invoke({"ingets"});
  EXPECT_EQ(run.code, kExitUsage);
  EXPECT_NE(run.err.find("ingets"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("Did you mean 'weir ingest'? Run 'weir --help' for the subcommands."),
            std::string::npos)
      << run.err;
  EXPECT_EQ(Invoke({"frobnicate"}).err.find("Did you mean"), std::string::npos);
  EXPECT_EQ(Invoke({}).code, kExitUsage) << "no subcommand prints help and fails";
}

TEST(CliTest, AnUnknownFlagNamesTheClosestAndTheSubcommandsOwnHelp) {
  const Outcome run = Invoke({"ingest", "--boostrap-servers", "k:9092"});
  EXPECT_EQ(run.code, kExitUsage);
  EXPECT_NE(run.err.find("Did you mean --bootstrap-servers? Run 'weir ingest --help' for its "
                         "flags."),
            std::string::npos)
      << run.err;
  const Outcome far = Invoke({"serve", "--zzzzzzzz"});
  EXPECT_EQ(far.code, kExitUsage);
  EXPECT_NE(far.err.find("Run 'weir serve --help' for its flags."), std::string::npos) << far.err;
  EXPECT_EQ(far.err.find("Did you mean"), std::string::npos) << far.err;
}

}  // namespace
}  // namespace weir::app
