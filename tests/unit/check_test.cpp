#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "labs/harness/check.hpp"

namespace gpulab::labs {
namespace {

TEST(Compare, ExactMatchPasses) {
  const std::vector<float> ref{1.5f, -2.0f, 3.25f};
  const auto c = compare(ref.data(), ref.data(), ref.size(), {0, 0});
  EXPECT_EQ(c.status, report::CheckStatus::passed);
  EXPECT_EQ(c.mismatches, 0u);
  EXPECT_EQ(c.elements, 3u);
  EXPECT_EQ(c.max_abs_error, 0.0);
}

TEST(Compare, PoisonedNanElementFails) {
  const std::vector<float> ref{1.0f, 2.0f, 3.0f};
  std::vector<float> got = ref;
  got[1] = std::numeric_limits<float>::quiet_NaN();
  const auto c = compare(got.data(), ref.data(), ref.size(), {1e-3, 1e-3});
  EXPECT_EQ(c.status, report::CheckStatus::failed);
  EXPECT_EQ(c.mismatches, 1u);
  EXPECT_TRUE(std::isinf(c.max_abs_error));
  EXPECT_NE(c.message.find("index 1"), std::string::npos) << c.message;
}

TEST(Compare, ToleranceScalesWithReference) {
  const std::vector<float> ref{1000.0f, 1.0f};
  // 0.5 off on 1000 is within rel 1e-3 (1.0 allowed); 0.5 off on 1 is not.
  std::vector<float> got{1000.5f, 1.0f};
  EXPECT_EQ(compare(got.data(), ref.data(), 2, {0, 1e-3}).status, report::CheckStatus::passed);
  got = {1000.0f, 1.5f};
  const auto c = compare(got.data(), ref.data(), 2, {0, 1e-3});
  EXPECT_EQ(c.status, report::CheckStatus::failed);
  EXPECT_DOUBLE_EQ(c.max_abs_error, 0.5);
  EXPECT_DOUBLE_EQ(c.max_rel_error, 0.5 / 1000.0);
}

TEST(Compare, ExactToleranceRejectsOneUlp) {
  const std::vector<float> ref{1.0f};
  const std::vector<float> got{std::nextafter(1.0f, 2.0f)};
  EXPECT_EQ(compare(got.data(), ref.data(), 1, {0, 0}).status, report::CheckStatus::failed);
}

TEST(CompareExact, IntegersMatchOrNameTheFirstDifference) {
  const std::vector<std::uint32_t> ref{7u, 0xDEADBEEFu, 42u, 9u};
  EXPECT_EQ(compare_exact(ref.data(), ref.data(), ref.size()).status, report::CheckStatus::passed);
  std::vector<std::uint32_t> got = ref;
  got[2] = 0xFFFFFFFFu;  // the poison pattern
  got[3] = 10u;
  const auto c = compare_exact(got.data(), ref.data(), ref.size());
  EXPECT_EQ(c.status, report::CheckStatus::failed);
  EXPECT_EQ(c.mismatches, 2u);
  EXPECT_EQ(c.elements, 4u);
  EXPECT_EQ(c.message, "2 of 4 elements differ; first at index 2: got 0xffffffff, expected 0x0000002a");
}

}  // namespace
}  // namespace gpulab::labs
