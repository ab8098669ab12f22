// The registry and the lab contract, checked on every registered lab without a GPU.
#include <set>

#include <gtest/gtest.h>

#include "labs/registry.hpp"
#include "reports/errors.hpp"

namespace gpulab::labs {
namespace {

TEST(Registry, TransposeIsRegistered) {
  ASSERT_NE(find_lab("transpose"), nullptr);
  EXPECT_EQ(find_lab("no-such-lab"), nullptr);
  EXPECT_THROW(lab_or_throw("no-such-lab"), UsageError);
}

TEST(Registry, EveryLabHonoursTheContract) {
  const std::set<std::string> findings = {
      "uncoalesced-global", "redundant-dram-traffic", "host-device-transfers", "um-page-faults",
      "memory-bound-at-roof", "latency-bound", "shared-bank-conflicts", "local-memory",
      "low-occupancy", "tail-effect", "launch-overhead", "warp-divergence", "atomic-contention",
      "sync-overhead", "compute-bound"};
  ASSERT_FALSE(all_labs().empty());
  for (const Lab* lab : all_labs()) {
    const auto& s = lab->spec();
    SCOPED_TRACE(s.name);
    EXPECT_FALSE(s.topic.empty());
    EXPECT_FALSE(s.summary.empty());
    EXPECT_GT(s.teaching_point.size(), 80u) << "two to four sentences";
    ASSERT_FALSE(s.variants.empty());
    EXPECT_EQ(s.variants.front().role, Role::baseline) << "baseline first";
    std::set<std::string> names;
    for (const auto& v : s.variants) {
      EXPECT_TRUE(names.insert(v.name).second) << "duplicate variant " << v.name;
      EXPECT_FALSE(v.description.empty()) << v.name;
      if (!v.expected_finding.empty())
        EXPECT_TRUE(findings.count(v.expected_finding)) << v.name << ": " << v.expected_finding;
    }
    for (const auto& p : s.params) {
      EXPECT_LE(p.min, p.default_value) << p.name;
      EXPECT_LE(p.default_value, p.max) << p.name;
    }
  }
}

TEST(ResolveParams, DefaultsSizeAndOverrides) {
  const auto& spec = lab_or_throw("transpose").spec();
  auto p = resolve_params(spec, std::nullopt, {});
  EXPECT_EQ(p.at("rows"), 8192);
  EXPECT_EQ(p.at("cols"), 8192);
  p = resolve_params(spec, 1000, {{"cols", 777}});
  EXPECT_EQ(p.at("rows"), 1000);
  EXPECT_EQ(p.at("cols"), 777);
}

TEST(ResolveParams, RejectsOutOfRangeAndUnknown) {
  const auto& spec = lab_or_throw("transpose").spec();
  EXPECT_THROW(resolve_params(spec, 0, {}), UsageError);
  EXPECT_THROW(resolve_params(spec, -5, {}), UsageError);
  EXPECT_THROW(resolve_params(spec, std::int64_t{1} << 40, {}), UsageError);
  EXPECT_THROW(resolve_params(spec, std::nullopt, {{"cols", 0}}), UsageError);
  try {
    resolve_params(spec, std::nullopt, {{"depth", 3}});
    FAIL() << "unknown parameter accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("rows, cols"), std::string::npos) << e.what();
  }
}

TEST(SelectVariants, AllListAndUnknown) {
  const auto& spec = lab_or_throw("transpose").spec();
  EXPECT_EQ(select_variants(spec, "all").size(), spec.variants.size());
  const auto two = select_variants(spec, "padded,naive");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0]->name, "naive") << "the lab's order, baseline first";
  EXPECT_EQ(two[1]->name, "padded");
  EXPECT_THROW(select_variants(spec, "naive,bogus"), UsageError);
  EXPECT_THROW(select_variants(spec, ","), UsageError);
}

}  // namespace
}  // namespace gpulab::labs
