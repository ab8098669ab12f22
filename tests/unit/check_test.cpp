#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "labs/harness/check.hpp"
#include "labs/harness/parallel_for.hpp"
#include "labs/harness/random.hpp"

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

// A check of millions of elements runs on every core, chunk by chunk; what it reports is what
// one pass in order would: every mismatch counted, the first named, a NaN anywhere infinite.
TEST(Compare, ChunksOnEveryCoreAddUpToOnePassInOrder) {
  const std::size_t n = std::size_t{1} << 21;
  ASSERT_GE(work_chunks(n).size(), 2u) << "the test needs several chunks";
  std::vector<float> ref(n);
  fill_uniform(ref, 7);
  std::vector<float> got = ref;
  const std::size_t last = n - 1, middle = work_chunks(n)[1].first;  // a chunk's first element
  got[last] += 0.5f;
  got[middle] = std::numeric_limits<float>::quiet_NaN();
  got[5] += 0.25f;
  const auto c = compare(got.data(), ref.data(), n, {1e-6, 0});
  EXPECT_EQ(c.mismatches, 3u);
  EXPECT_TRUE(std::isinf(c.max_abs_error));
  EXPECT_NE(c.message.find("first at index 5:"), std::string::npos) << c.message;

  got[middle] = ref[middle];
  const auto finite = compare(got.data(), ref.data(), n, {1e-6, 0});
  EXPECT_EQ(finite.mismatches, 2u);
  EXPECT_NEAR(finite.max_abs_error, 0.5, 1e-6);

  std::vector<std::uint32_t> ints(n), other(n);
  for (std::size_t i = 0; i < n; ++i) ints[i] = other[i] = static_cast<std::uint32_t>(i);
  other[last] = 0;
  other[middle] = 1;
  const auto e = compare_exact(other.data(), ints.data(), n);
  EXPECT_EQ(e.mismatches, 2u);
  EXPECT_NE(e.message.find(fmt::format("first at index {}:", middle)), std::string::npos)
      << e.message;
  EXPECT_DOUBLE_EQ(e.max_abs_error, static_cast<double>(last));
}

// The chunks cover [0, n) in order, none below 64 Ki elements but the last: a small input is one
// chunk, run without a thread.
TEST(ParallelFor, ChunksCoverTheRangeInOrder) {
  EXPECT_TRUE(work_chunks(0).empty());
  EXPECT_EQ(work_chunks(1000).size(), 1u);
  const std::size_t n = (std::size_t{1} << 22) + 3;
  const auto chunks = work_chunks(n);
  std::size_t next = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_EQ(chunks[i].first, next);
    if (i + 1 < chunks.size()) EXPECT_GE(chunks[i].second - chunks[i].first, std::size_t{1} << 16);
    next = chunks[i].second;
  }
  EXPECT_EQ(next, n);
  const auto sums = parallel_chunks<std::size_t>(
      n, [](std::size_t begin, std::size_t end) { return end - begin; });
  std::size_t total = 0;
  for (auto s : sums) total += s;
  EXPECT_EQ(total, n);
}

// Filled on every core, each value is still value i of the seed's sequence.
TEST(FillUniform, EveryCoreFillsTheSeedsSequence) {
  std::vector<float> data((std::size_t{1} << 20) + 5);
  fill_uniform(data, 11, -1.0f, 1.0f);
  for (std::size_t i = 0; i < data.size(); ++i) {
    const float expected = static_cast<float>(-1.0 + static_cast<double>(random_bits(11, i) >> 40) *
                                                         (2.0 / 16777216.0));
    ASSERT_EQ(data[i], expected) << i;
  }
}

}  // namespace
}  // namespace gpulab::labs
