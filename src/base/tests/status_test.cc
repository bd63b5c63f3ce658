#include "base/status.h"

#include <gtest/gtest.h>

namespace weir {
namespace {

TEST(StatusTest, ClassifiedErrorCarriesClassSourceAndCode) {
  const Status status =
      ClassifiedError(ErrorClass::kRetriable, "librdkafka", "_TRANSPORT", "broker down");
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(status.IsIOError());
  EXPECT_EQ(ClassOf(status), ErrorClass::kRetriable);
  const ErrorDetail* detail = GetErrorDetail(status);
  ASSERT_NE(detail, nullptr);
  EXPECT_EQ(detail->source(), "librdkafka");
  EXPECT_EQ(detail->code(), "_TRANSPORT");
  EXPECT_EQ(detail->ToString(), "retriable librdkafka:_TRANSPORT");
}

TEST(StatusTest, BadDataIsInvalidAndFatalIsUnknown) {
  EXPECT_TRUE(ClassifiedError(ErrorClass::kBadData, "json", "TAPE_ERROR", "x").IsInvalid());
  const Status fatal = ClassifiedError(ErrorClass::kFatal, "sqlstate", "28P01", "auth");
  EXPECT_TRUE(fatal.IsUnknownError());
  EXPECT_EQ(ClassOf(fatal), ErrorClass::kFatal);
}

TEST(StatusTest, UnclassifiedErrorsFallBackOnTheirCode) {
  EXPECT_EQ(ClassOf(Status::IOError("disk")), ErrorClass::kRetriable);
  EXPECT_EQ(ClassOf(Status::Invalid("bad setting")), ErrorClass::kFatal);
  EXPECT_EQ(GetErrorDetail(Status::Invalid("x")), nullptr);
}

TEST(StatusTest, WithContextPrefixesTheMessageAndKeepsTheDetail) {
  const Status inner = ClassifiedError(ErrorClass::kRetriable, "sqlstate", "40001", "conflict");
  const Status outer = WithContext(WithContext(inner, "table events"), "dataset clicks");
  EXPECT_EQ(outer.message(), "dataset clicks: table events: conflict");
  ASSERT_NE(GetErrorDetail(outer), nullptr);
  EXPECT_EQ(GetErrorDetail(outer)->code(), "40001");
  EXPECT_TRUE(WithContext(Status::OK(), "ignored").ok());
}

}  // namespace
}  // namespace weir
