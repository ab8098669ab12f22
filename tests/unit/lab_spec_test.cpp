// The registry and the lab contract, checked on every registered lab without a GPU.
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "labs/harness/registry.hpp"
#include "reports/base/errors.hpp"
#include "reports/diagnosis/diagnosis.hpp"

namespace gpulab::labs {
namespace {

TEST(Registry, TransposeIsRegistered) {
  ASSERT_NE(find_lab("transpose"), nullptr);
  EXPECT_EQ(find_lab("no-such-lab"), nullptr);
  EXPECT_THROW(lab_or_throw("no-such-lab"), UsageError);
}

// A lab of any name with one variant, for registering twice.
class NamedLab final : public Lab {
 public:
  explicit NamedLab(std::string name) {
    spec_.name = std::move(name);
    spec_.variants = {{"only", Role::baseline, "the one variant", ""}};
  }
  const LabSpec& spec() const override { return spec_; }
  std::unique_ptr<LabRun> setup(const ParamValues&, std::uint64_t) const override {
    return nullptr;
  }

 private:
  LabSpec spec_;
};

TEST(Registry, ASecondLabOfTheSameNameIsRefused) {
  const Lab* transpose = find_lab("transpose");
  ASSERT_NE(transpose, nullptr);
  try {
    register_lab(std::make_unique<NamedLab>("transpose"));
    FAIL() << "a duplicate lab name was accepted";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("'transpose'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(find_lab("transpose"), transpose) << "the first registration stands";
}

// The labs a finding names as demonstrating its fix (`see: gpulab run LAB`) exist.
TEST(Registry, EveryLabAFindingPointsToIsRegistered) {
  for (const auto& f : report::finding_catalogue())
    for (const char* lab : f.labs) EXPECT_NE(find_lab(lab), nullptr) << f.id << " -> " << lab;
}

TEST(Registry, EveryLabHonoursTheContract) {
  std::set<std::string> findings;
  for (const auto& f : report::finding_catalogue()) findings.insert(f.id);
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
      for (const auto& ids : {v.expected.any_of, v.expected.none_of})
        for (const auto& id : ids) EXPECT_TRUE(findings.count(id)) << v.name << ": " << id;
      if (v.expected.any_of.size() > 1 || !v.expected.none_of.empty())
        EXPECT_FALSE(v.expected.why.empty()) << v.name << ": why more than one finding is right";
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

// A limit across parameters is checked with their ranges, before any GPU work: coalescing's
// strided input (size x stride) spans at most 4 GiB, exactly 4 GiB at stride 16 and the default
// size, and each parameter alone is in range at stride 32.
TEST(ResolveParams, ALimitAcrossParametersIsCheckedWithTheRanges) {
  const auto& coalescing = lab_or_throw("coalescing").spec();
  ASSERT_TRUE(coalescing.check_params);
  EXPECT_NO_THROW(resolve_params(coalescing, std::nullopt, {{"stride", 16}}));
  try {
    resolve_params(coalescing, std::nullopt, {{"stride", 32}});
    FAIL() << "an 8.59 GB strided input accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("size x stride = 67108864 x 32"), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(resolve_params(coalescing, std::int64_t{1} << 24, {{"stride", 32}}));
}

// The sweeps the README shows: vectorize to 1 Gi elements (past any L2), matmul's K apart from
// M = N, which --size sets with them unless k is given, and occupancy's block size.
TEST(ResolveParams, SweptParametersReachTheirRanges) {
  const auto& vectorize = lab_or_throw("vectorize").spec();
  EXPECT_EQ(resolve_params(vectorize, std::int64_t{1} << 30, {}).at("size"), std::int64_t{1} << 30);
  EXPECT_THROW(resolve_params(vectorize, (std::int64_t{1} << 30) + 1, {}), UsageError);

  const auto& matmul = lab_or_throw("matmul").spec();
  auto p = resolve_params(matmul, std::nullopt, {});
  EXPECT_EQ(p.at("size"), 4096);
  EXPECT_EQ(p.at("k"), 4096);
  p = resolve_params(matmul, 1024, {});
  EXPECT_EQ(p.at("k"), 1024) << "--size sets K too: square unless k is given";
  p = resolve_params(matmul, 1024, {{"k", 16}});
  EXPECT_EQ(p.at("size"), 1024);
  EXPECT_EQ(p.at("k"), 16);
  EXPECT_THROW(resolve_params(matmul, std::nullopt, {{"k", 4}}), UsageError);

  const auto& occupancy = lab_or_throw("occupancy").spec();
  EXPECT_EQ(resolve_params(occupancy, std::nullopt, {}).at("block"), 256);
  EXPECT_EQ(resolve_params(occupancy, 4096, {}).at("block"), 256) << "--size leaves it";
  EXPECT_THROW(resolve_params(occupancy, std::nullopt, {{"block", 2048}}), UsageError);
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
