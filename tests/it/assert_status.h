// GoogleTest assertions on Status and Result<T> that print the error when they fail.
#pragma once

#include <gtest/gtest.h>

#include "base/status.h"

#define WEIR_TEST_CONCAT_INNER(a, b) a##b
#define WEIR_TEST_CONCAT(a, b) WEIR_TEST_CONCAT_INNER(a, b)

#define ASSERT_OK(expr)                                        \
  do {                                                         \
    const ::weir::Status _weir_status = (expr);                \
    ASSERT_TRUE(_weir_status.ok()) << _weir_status.ToString(); \
  } while (false)

#define ASSERT_OK_AND_ASSIGN_IMPL(result, lhs, rexpr)     \
  auto result = (rexpr);                                  \
  ASSERT_TRUE(result.ok()) << result.status().ToString(); \
  lhs = std::move(result).ValueUnsafe()

#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  ASSERT_OK_AND_ASSIGN_IMPL(WEIR_TEST_CONCAT(_weir_result_, __LINE__), lhs, rexpr)
