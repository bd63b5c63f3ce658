#include "filesource/line_reader.h"

#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace weir::filesource {
namespace {

class LineReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("weir-line-reader-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& bytes) {
    const auto path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  static std::string Gzip(const std::string& text) {
    z_stream z{};
    deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    std::string out(deflateBound(&z, text.size()) + 64, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    z.avail_in = static_cast<uInt>(text.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
  }

  static std::string Zstd(const std::string& text) {
    std::string out(ZSTD_compressBound(text.size()), '\0');
    out.resize(ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3));
    return out;
  }

  // Every line read from `path` (resumed at `resume`) as "offset:text".
  static std::vector<std::string> Lines(const std::string& path, int64_t resume = 0,
                                        size_t max = 1 << 20) {
    auto file = IdentifyFile(path);
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    auto reader = LineReader::Open(*file, resume, max);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    std::vector<std::string> lines;
    Line line;
    while (true) {
      auto more = (*reader)->Next(&line);
      EXPECT_TRUE(more.ok()) << more.status().ToString();
      if (!more.ok() || !*more) break;
      lines.push_back(std::to_string(line.offset) + ":" + std::string(line.text) +
                      (line.cut ? "(cut)" : ""));
    }
    return lines;
  }

  std::filesystem::path dir_;
};

const std::string kText = "{\"a\":1}\n\n{\"b\":22}\r\n  \n{\"c\":333}";  // no final newline
const std::vector<std::string> kLines = {"0:{\"a\":1}", "9:{\"b\":22}", "22:{\"c\":333}"};

TEST_F(LineReaderTest, PlainGzipAndZstdGiveTheSameLinesAndOffsets) {
  EXPECT_EQ(Lines(Write("plain.json", kText)), kLines);
  EXPECT_EQ(Lines(Write("named.json.zst", Gzip(kText))), kLines);  // magic bytes decide
  EXPECT_EQ(Lines(Write("z", Zstd(kText))), kLines);
  EXPECT_EQ(IdentifyFile(Write("g", Gzip(kText)))->compression, Compression::kGzip);
  EXPECT_EQ(IdentifyFile(Write("z2", Zstd(kText)))->compression, Compression::kZstd);
  EXPECT_EQ(IdentifyFile(Write("p.gz", kText))->compression, Compression::kNone);
}

TEST_F(LineReaderTest, ResumesAfterTheLineTheLedgerPointsInto) {
  for (const std::string& bytes : {kText, Gzip(kText), Zstd(kText)}) {
    const auto path = Write("f", bytes);
    // The ledger holds the last committed line's offset + 1.
    EXPECT_EQ(Lines(path, 1), std::vector<std::string>(kLines.begin() + 1, kLines.end()));
    EXPECT_EQ(Lines(path, 10), std::vector<std::string>(kLines.begin() + 2, kLines.end()));
    EXPECT_TRUE(Lines(path, 23).empty());
  }
}

TEST_F(LineReaderTest, ConcatenatedGzipMembersAndZstdFramesAreOneStream) {
  const std::string first = "{\"x\":1}\n", second = "{\"y\":2}\n";
  const std::vector<std::string> both = {"0:{\"x\":1}", "8:{\"y\":2}"};
  EXPECT_EQ(Lines(Write("g", Gzip(first) + Gzip(second))), both);
  EXPECT_EQ(Lines(Write("z", Zstd(first) + Zstd(second))), both);
}

TEST_F(LineReaderTest, ALongLineIsCutOneByteOverTheLimitAndTheNextLineFollows) {
  const std::string big(5000, 'x');
  const auto lines = Lines(Write("f", big + "\n{\"n\":1}\n"), 0, 100);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "0:" + big.substr(0, 101) + "(cut)");
  EXPECT_EQ(lines[1], "5001:{\"n\":1}");
}

TEST_F(LineReaderTest, TruncatedOrCorruptCompressedDataIsAnErrorNamingTheFile) {
  const std::string gz = Gzip(kText), zs = Zstd(kText);
  for (const std::string& bytes : {gz.substr(0, gz.size() - 12), zs.substr(0, zs.size() - 6)}) {
    const auto path = Write("broken", bytes);
    auto file = IdentifyFile(path);
    ASSERT_TRUE(file.ok());
    auto reader = LineReader::Open(*file, 0, 1 << 20);
    ASSERT_TRUE(reader.ok());
    Status failed;
    Line line;
    for (int i = 0; i < 10 && failed.ok(); ++i) {
      auto more = (*reader)->Next(&line);
      if (!more.ok())
        failed = more.status();
      else if (!*more)
        break;
    }
    EXPECT_FALSE(failed.ok());
    EXPECT_NE(failed.message().find(path), std::string::npos) << failed.message();
  }
}

TEST_F(LineReaderTest, AMissingFileIsAnErrorNamingIt) {
  auto file = IdentifyFile((dir_ / "absent.jsonl").string());
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find("absent.jsonl"), std::string::npos);
}

TEST_F(LineReaderTest, TheIdentityIsTheContentsHash) {
  const auto a = IdentifyFile(Write("a", kText)), b = IdentifyFile(Write("b", kText));
  const auto c = IdentifyFile(Write("c", kText + "\n"));
  EXPECT_EQ(a->LedgerTopic(), b->LedgerTopic());
  EXPECT_NE(a->LedgerTopic(), c->LedgerTopic());
  EXPECT_EQ(a->LedgerTopic().size(), 5u + 64u);
  EXPECT_EQ(a->size, static_cast<int64_t>(kText.size()));
}

}  // namespace
}  // namespace weir::filesource
