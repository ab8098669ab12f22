// Derived-metric formulas on hand-picked counter values (inputs, not measurements).
#include <gtest/gtest.h>

#include "reports/derived.hpp"
#include "reports/report.hpp"

namespace gpulab::report {
namespace {

namespace m = metrics::name;
namespace d = derived;

Kernel kernel_with(std::map<std::string, double> raw) {
  Kernel k;
  k.name = "k";
  k.metrics = std::move(raw);
  return k;
}

TEST(Derived, SectorsPerRequest) {
  const auto out = derive(kernel_with({{m::gld_sectors, 400}, {m::gld_requests, 100},
                                       {m::gst_sectors, 3200}, {m::gst_requests, 100}}),
                          nullptr);
  EXPECT_DOUBLE_EQ(out.at(d::gld_sectors_per_request), 4.0);
  EXPECT_DOUBLE_EQ(out.at(d::gst_sectors_per_request), 32.0);
}

TEST(Derived, OverfetchJudgesAnyAccessWidth) {
  // A float4 load: 16 sectors per request, 512 bytes asked for per request.
  const auto wide = derive(kernel_with({{m::gld_sectors, 1600}, {m::gld_requests, 100},
                                        {m::gld_bytes_requested, 51200}}),
                           nullptr);
  EXPECT_DOUBLE_EQ(wide.at(d::gld_sectors_per_request), 16.0);
  EXPECT_DOUBLE_EQ(wide.at(d::gld_overfetch), 1.0);
  // One 4-byte word per 32-byte sector: 8 times the bytes asked for.
  const auto strided = derive(kernel_with({{m::gst_sectors, 3200}, {m::gst_bytes_requested, 12800}}),
                              nullptr);
  EXPECT_DOUBLE_EQ(strided.at(d::gst_overfetch), 8.0);
}

TEST(Derived, SharedWavefrontsAndExcess) {
  const auto out = derive(kernel_with({{m::shld_wavefronts, 3200}, {m::shld_inst, 100},
                                       {m::shst_wavefronts, 100}, {m::shst_inst, 100}}),
                          nullptr);
  EXPECT_DOUBLE_EQ(out.at(d::shld_wavefronts_per_inst), 32.0);
  EXPECT_DOUBLE_EQ(out.at(d::shst_wavefronts_per_inst), 1.0);
  EXPECT_DOUBLE_EQ(out.at(d::shared_excess_wavefronts), 3100.0);
}

TEST(Derived, SharedAtomicsConflictsJoinTheExcess) {
  // A radix-sort histogram: conflict-free loads and stores, digit counters that conflict.
  std::map<std::string, double> raw = {
      {m::shld_wavefronts, 100},   {m::shld_inst, 100},    {m::shst_wavefronts, 100},
      {m::shst_inst, 100},         {m::shld_conflicts, 0}, {m::shst_conflicts, 0},
      {m::shatom_wavefronts, 900}, {m::shatom_inst, 100},  {m::shatom_conflicts, 800}};
  EXPECT_DOUBLE_EQ(derive(kernel_with(raw), nullptr).at(d::shared_excess_wavefronts), 800.0);
  raw.erase(m::shatom_conflicts);  // the basic set: loads and stores alone
  EXPECT_DOUBLE_EQ(derive(kernel_with(raw), nullptr).at(d::shared_excess_wavefronts), 0.0);
}

TEST(Derived, NoSharedInstructionsMeansNoRatioButZeroExcess) {
  const auto out = derive(kernel_with({{m::shld_wavefronts, 0}, {m::shld_inst, 0},
                                       {m::shst_wavefronts, 0}, {m::shst_inst, 0}}),
                          nullptr);
  EXPECT_EQ(out.count(d::shld_wavefronts_per_inst), 0u) << "0/0 is not measured, not 0";
  EXPECT_DOUBLE_EQ(out.at(d::shared_excess_wavefronts), 0.0);
}

TEST(Derived, DramAgainstModel) {
  const WorkModel model{1000, 500, 0};
  const auto out = derive(kernel_with({{m::dram_read, 1500}, {m::dram_write, 500},
                                       {m::duration, 1000}}),
                          &model);
  EXPECT_DOUBLE_EQ(out.at(d::dram_bytes), 2000);
  EXPECT_DOUBLE_EQ(out.at(d::dram_read_over_model), 1.5);
  EXPECT_DOUBLE_EQ(out.at(d::dram_write_over_model), 1.0);
  EXPECT_DOUBLE_EQ(out.at(d::dram_over_model), 2000.0 / 1500.0);
  EXPECT_DOUBLE_EQ(out.at(d::dram_bandwidth), 2000 / 1e-6);
}

TEST(Derived, NoModelNoModelRatios) {
  const auto out = derive(kernel_with({{m::dram_read, 1500}, {m::dram_write, 500}}), nullptr);
  EXPECT_EQ(out.count(d::dram_read_over_model), 0u);
  EXPECT_EQ(out.count(d::dram_bandwidth), 0u) << "no duration, no bandwidth";
}

TEST(Derived, LocalBytesAndOccupancy) {
  Kernel k = kernel_with({{m::local_ld_bytes, 100}, {m::local_st_bytes, 28},
                          {m::warps_active_pct, 45}});
  k.attributes.theoretical_occupancy = 0.5;
  const auto out = derive(k, nullptr);
  EXPECT_DOUBLE_EQ(out.at(d::local_bytes), 128);
  EXPECT_DOUBLE_EQ(out.at(d::achieved_occupancy), 0.45);
  EXPECT_DOUBLE_EQ(out.at(d::occupancy_ratio), 0.9);
}

TEST(Derived, MissingInputsGiveNothing) {
  EXPECT_TRUE(derive(kernel_with({}), nullptr).empty());
}

TEST(Derived, DeriveAllUsesModelOnlyForSingleKernelVariants) {
  Report r;
  r.work = {100, 100, 0};
  Variant one, two;
  one.kernels = {kernel_with({{m::dram_read, 200}, {m::dram_write, 100}})};
  two.kernels = {one.kernels[0], one.kernels[0]};
  r.variants = {one, two};
  derive_all(r);
  EXPECT_DOUBLE_EQ(r.variants[0].kernels[0].derived.at(d::dram_read_over_model), 2.0);
  EXPECT_EQ(r.variants[1].kernels[0].derived.count(d::dram_read_over_model), 0u);
}

TEST(Derived, CatalogueCoversEveryDerivedName) {
  Kernel k = kernel_with({{m::gld_sectors, 1},
                          {m::gld_requests, 1},
                          {m::gst_sectors, 1},
                          {m::gst_requests, 1},
                          {m::shld_wavefronts, 1},
                          {m::shld_inst, 1},
                          {m::shst_wavefronts, 1},
                          {m::shst_inst, 1},
                          {m::local_ld_bytes, 1},
                          {m::local_st_bytes, 1},
                          {m::dram_read, 1},
                          {m::dram_write, 1},
                          {m::duration, 1},
                          {m::warps_active_pct, 1},
                          {m::gld_bytes_requested, 1},
                          {m::gst_bytes_requested, 1},
                          {m::l1_hit_pct, 50}});
  k.attributes.theoretical_occupancy = 1;
  const WorkModel model{1, 1, 0};
  const auto out = derive(k, &model);
  EXPECT_EQ(out.size(), derived_catalogue().size());
  for (const auto& [name, value] : out) EXPECT_NE(find_derived(name), nullptr) << name;
}

}  // namespace
}  // namespace gpulab::report
