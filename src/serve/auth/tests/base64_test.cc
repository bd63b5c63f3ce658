#include "serve/auth/base64.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace weir::serve::auth {
namespace {

TEST(Base64Test, EncodesRfc4648Vectors) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
}

TEST(Base64Test, DecodesWithPaddingRemoved) {
  for (const std::string& text :
       std::vector<std::string>{"", "f", "fo", "foo", "foob", "fooba", "foobar"}) {
    auto decoded = Base64Decode(Base64Encode(text));
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(*decoded, text);
  }
}

TEST(Base64Test, RoundTripsAllByteValues) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  for (size_t length = 0; length <= bytes.size(); length += 7) {
    auto decoded = Base64Decode(Base64Encode(bytes.substr(0, length)));
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(*decoded, bytes.substr(0, length));
  }
}

TEST(Base64Test, RejectsMalformedText) {
  for (const std::string& text :
       std::vector<std::string>{"Zg=", "Zg", "Z===", "====", "Zm9v!A==", " Zm9v", "Zm9v ", "Zm9v\n",
                                "Z=g=", "Zg=A", "Zm9vYmFy====", std::string("Zm\0v", 4)}) {
    EXPECT_FALSE(Base64Decode(text).ok()) << text;
  }
}

}  // namespace
}  // namespace weir::serve::auth
