// Every lab of the registry, every variant correct at small odd sizes: a lab added to the registry
// is covered without a test of its own. Each parameter that --size sets takes the smallest odd
// value its bounds allow, then 33, 257 and 1001 where the bounds allow them (odd sizes leave
// partial blocks, tiles and vectors; 1001 stays cheap for the CPU reference of a matmul); the other
// parameters keep their defaults. A variant the machine cannot run (NCCL on one GPU) is skipped by
// the lab with its reason, which the test prints. (Each lab's own tests are its *_gpu_test.cpp,
// which LabContract checks.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "gpu/lab_run.hpp"
#include "labs/harness/registry.hpp"

namespace gpulab {
namespace {

std::vector<std::string> lab_names() {
  std::vector<std::string> names;
  for (const auto* lab : labs::all_labs()) names.push_back(lab->spec().name);
  return names;
}

// The odd sizes every parameter set by --size allows.
std::vector<std::int64_t> small_odd_sizes(const labs::LabSpec& spec) {
  std::int64_t low = 1, high = INT64_MAX;
  for (const auto& p : spec.params) {
    if (!p.set_by_size) continue;
    low = std::max(low, p.min);
    high = std::min(high, p.max);
  }
  std::set<std::int64_t> sizes;
  for (std::int64_t n : {low, std::int64_t{33}, std::int64_t{257}, std::int64_t{1001}}) {
    n = std::max(n, low) | 1;  // odd
    if (n <= high) sizes.insert(n);
  }
  return {sizes.begin(), sizes.end()};
}

class EveryLab : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryLab, AllVariantsCorrectAtSmallOddSizes) {
  GPULAB_REQUIRE_GPU();
  const labs::LabSpec& spec = labs::lab_or_throw(GetParam()).spec();
  const std::vector<std::int64_t> sizes = small_odd_sizes(spec);
  ASSERT_FALSE(sizes.empty()) << "the lab's --size parameters allow no odd size";
  std::set<std::string> skipped;
  int checked = 0;
  for (std::int64_t n : sizes) {
    const report::Report r = test::run_lab(spec.name, test::check_only(n));
    EXPECT_EQ(r.variants.size(), spec.variants.size()) << "size " << n;
    for (const auto& v : r.variants) {
      if (v.status == report::VariantStatus::skipped) {
        skipped.insert(v.name + ": " + v.skip_reason);
        continue;
      }
      ++checked;
      EXPECT_EQ(v.check.status, report::CheckStatus::passed)
          << "size " << n << ", " << v.name << ": " << v.check.message;
      EXPECT_EQ(v.check.mismatches, 0u) << "size " << n << ", " << v.name;
      EXPECT_GT(v.check.elements, 0u) << "size " << n << ", " << v.name;
    }
  }
  for (const auto& why : skipped) std::cout << "skipped by the lab: " << why << "\n";
  if (checked == 0) GTEST_SKIP() << "SKIPPED: the lab skipped every variant here";
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace(name.begin(), name.end(), '-', '_');  // gtest names take letters, digits and _
  return name;
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryLab, ::testing::ValuesIn(lab_names()), test_name);

}  // namespace
}  // namespace gpulab
