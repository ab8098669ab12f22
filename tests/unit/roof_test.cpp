// The roof nodes of the memory branch (at-roof, below-roof): on the H200 fixtures, and on counter
// values picked to sit on either side of a rule (not measurements).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "labs/harness/registry.hpp"
#include "reports/derived.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/diagnosis/diagnosis_walk.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"

namespace gpulab::report {
namespace {

namespace m = metrics::name;

std::string fixture(const std::string& lab) {
  return std::string(GPULAB_FIXTURES_DIR) + "/labs/" + lab + ".json";
}

Report diagnosed(const std::string& lab) {
  Report r = load_report(fixture(lab));
  derive_all(r);
  diagnose_report(r, Thresholds());
  return r;
}

const Finding* finding(const Diagnosis& d, const std::string& id) {
  const auto it = std::find_if(d.findings.begin(), d.findings.end(),
                               [&](const Finding& f) { return f.id == id; });
  return it == d.findings.end() ? nullptr : &*it;
}

const Diagnosis& diagnosis_of(const Report& r, const std::string& variant,
                              const std::string& kernel) {
  const Variant& v = *r.find_variant(variant);
  const auto it = std::find_if(v.kernels.begin(), v.kernels.end(),
                               [&](const Kernel& k) { return k.name == kernel && k.diagnosis; });
  if (it == v.kernels.end()) throw std::runtime_error(variant + ": no diagnosed " + kernel);
  return *it->diagnosis;
}

// ---- on the fixtures --------------------------------------------------------------------------

// Every recorded kernel that the memory branch judges, by the fraction of the copy roof its
// at-roof step measured. Each kernel's own evidence, so that both paths are read: roof_fraction
// with a work model, dram_over_copy_roof without one.
struct Judged {
  std::string where;
  double fraction;
  bool at_roof;
};

std::vector<Judged> memory_bound_kernels() {
  std::vector<Judged> out;
  // Every lab: a kernel of any of them that reaches the step is one more point the threshold
  // must keep its distance from.
  for (const auto* lab : labs::all_labs()) {
    const Report r = diagnosed(lab->spec().name);
    for (const auto& v : r.variants)
      for (const auto& k : v.kernels) {
        if (!k.diagnosis) continue;
        for (const auto& step : k.diagnosis->path) {
          if (step.node != "at-roof") continue;
          for (const auto& e : step.evidence)
            if (e.threshold == "at_roof.roof_fraction" && e.value)
              out.push_back(
                  {lab->spec().name + "/" + v.name + "/" + k.name, *e.value, step.answer == "yes"});
        }
      }
  }
  return out;
}

TEST(RoofFixtures, TheThresholdSitsInAGapOfTheRecordedKernels) {
  // Run to run the effective bandwidth of one kernel moves by a point or two: a threshold within
  // two points of a recorded kernel would flip its finding on the next recording.
  const double t = Thresholds()["at_roof.roof_fraction"];
  const auto judged = memory_bound_kernels();
  ASSERT_GE(judged.size(), 10u);
  int above = 0, below = 0;
  for (const auto& j : judged) {
    EXPECT_GT(std::abs(j.fraction - t), 0.02) << j.where << " at " << j.fraction;
    (j.fraction >= t ? above : below) += 1;
  }
  EXPECT_GE(above, 5) << "the streaming kernels at the roof";
  EXPECT_GE(below, 2) << "the conflict-free 32x32 transposes";
}

TEST(RoofFixtures, ModelAndNoModelKernelsAreJudgedAlike) {
  // transpose/padded has a work model (roof_fraction); reduction/warp-shuffle is two kernels, so
  // its reduce kernel has none (DRAM bandwidth over the copy roof). Both are judged against
  // at_roof.roof_fraction.
  const Report transpose = diagnosed("transpose"), reduction = diagnosed("reduction");
  const auto& padded = diagnosis_of(transpose, "padded", "transpose_padded");
  const auto& shuffle = diagnosis_of(reduction, "warp-shuffle", "reduce_warp_shuffle");
  const auto evidence_of = [](const Diagnosis& d) {
    for (const auto& s : d.path)
      if (s.node == "at-roof")
        for (const auto& e : s.evidence)
          if (e.threshold == "at_roof.roof_fraction") return e.metric;
    return std::string("(none)");
  };
  EXPECT_EQ(evidence_of(padded), "roof_fraction");
  EXPECT_EQ(evidence_of(shuffle), "dram_over_copy_roof");
  EXPECT_TRUE(finding(padded, "memory-bound-below-roof"));
  EXPECT_TRUE(finding(shuffle, "memory-bound-at-roof"));
}

TEST(RoofFixtures, TheTransposeTilesAreBelowTheRoofForWantOfBytesInFlight) {
  const Report r = diagnosed("transpose");
  for (const char* v : {"padded", "swizzled"}) {
    const auto& d = *r.find_variant(v)->kernels.at(0).diagnosis;
    ASSERT_FALSE(d.findings.empty()) << v;
    const Finding& f = d.findings.front();
    EXPECT_EQ(f.id, "memory-bound-below-roof") << v;
    EXPECT_FALSE(finding(d, "memory-bound-at-roof")) << v;
    EXPECT_NE(f.detail.find("too few bytes in flight per SM"), std::string::npos) << f.detail;
    EXPECT_NE(f.detail.find("128 B per global load request"), std::string::npos) << f.detail;
    // The severity is the share of the time the gap to the roof costs.
    const double fraction = r.find_variant(v)->roof_fraction;
    EXPECT_NEAR(f.score, 0.4 + 0.6 * (1 - fraction), 1e-9) << v;
  }
}

// ---- node by node -------------------------------------------------------------------------------

// A memory-bound kernel that moves exactly its model's bytes, on an H200-like device whose copy
// roof is 88% of its theoretical bandwidth.
struct Case {
  Kernel kernel;
  Variant variant;
  WorkModel model{1e9, 1e9, 0};
  DeviceInfo device;
  bool with_model = true;
  Case() {
    device.sm_count = 132;
    device.max_warps_per_sm = 64;
    device.cc_major = 9;
    device.shared_per_sm_bytes = 233472;
    device.roofs.theoretical_bandwidth = 4.8e12;
    device.roofs.copy_bandwidth = 0.88 * 4.8e12;
    kernel.name = "k";
    kernel.attributes = {32, 0, 0, 0, 256, 132 * 8 * 10, 8, 1.0};
    kernel.metrics = {{m::dram_pct, 75},
                      {m::sm_pct, 20},
                      {m::gld_sectors, 31.25e6},
                      {m::gld_requests, 7.8125e6},
                      {m::gst_sectors, 31.25e6},
                      {m::gst_requests, 7.8125e6},
                      {m::gld_bytes_requested, 1e9},
                      {m::gst_bytes_requested, 1e9},
                      {m::shld_wavefronts, 0},
                      {m::shld_inst, 0},
                      {m::shst_wavefronts, 0},
                      {m::shst_inst, 0},
                      {m::local_ld_bytes, 0},
                      {m::local_st_bytes, 0},
                      {m::warps_active_pct, 90},
                      {m::threads_per_inst, 32},
                      {m::duration, 1e6},
                      {m::dram_read, 1e9},
                      {m::dram_write, 1e9},
                      {m::atom_requests, 0},
                      {m::red_requests, 0},
                      {m::warp_latency, 30},
                      {m::stall_long_scoreboard, 18},
                      {m::stall_barrier, 6}};
    variant.roof_fraction = 0.85;
  }
  Diagnosis run(const Thresholds& t = {}) {
    kernel.derived = derive(kernel, with_model ? &model : nullptr);
    return diagnose({&kernel, &variant, with_model ? &model : nullptr, &device, 1}, t);
  }
  std::string principal(const Thresholds& t = {}) {
    const auto d = run(t);
    return d.findings.empty() ? "" : d.findings.front().id;
  }
};

TEST(RoofNodes, TheRoofFractionDecidesBetweenAtAndBelow) {
  struct Row {
    double roof_fraction;
    const char* expected;
  };
  for (const Row& row : {Row{0.70, "memory-bound-below-roof"}, Row{0.86, "memory-bound-below-roof"},
                         Row{0.87, "memory-bound-at-roof"}, Row{0.99, "memory-bound-at-roof"}}) {
    Case c;
    c.variant.roof_fraction = row.roof_fraction;
    EXPECT_EQ(c.principal(), row.expected) << row.roof_fraction;
  }
}

TEST(RoofNodes, WithoutAModelTheDramBandwidthOverTheCopyRoofDecides) {
  struct Row {
    double dram_pct;  // of the theoretical bandwidth; the copy roof is 88% of it
    const char* expected;
  };
  for (const Row& row : {Row{70, "memory-bound-below-roof"}, Row{76, "memory-bound-below-roof"},
                         Row{77, "memory-bound-at-roof"}, Row{86, "memory-bound-at-roof"}}) {
    Case c;
    c.with_model = false;
    c.kernel.metrics[m::dram_pct] = row.dram_pct;
    EXPECT_EQ(c.principal(), row.expected)
        << row.dram_pct << "% of peak, " << row.dram_pct / 88 << " of the copy roof";
  }
}

TEST(RoofNodes, WithoutAMeasuredRoofDramPctIsHeldToItsOwnThreshold) {
  for (const double pct : {70.0, 76.0, 78.0, 90.0}) {
    Case c;
    c.with_model = false;
    c.device.roofs = {};
    c.kernel.metrics[m::dram_pct] = pct;
    EXPECT_EQ(c.principal(), pct >= 77 ? "memory-bound-at-roof" : "memory-bound-below-roof") << pct;
  }
  Case c;  // the fallback follows its threshold
  c.with_model = false;
  c.device.roofs = {};
  Thresholds t;
  t.set("at_roof.dram_pct", 70);
  EXPECT_EQ(c.principal(t), "memory-bound-at-roof") << "75% against 70";
}

TEST(RoofNodes, BelowTheRoofOnlyWhenTheBytesAreMinimal) {
  Case c;
  c.kernel.metrics[m::dram_read] = 1.4e9;  // 1.2x the model: neither minimal nor redundant
  const auto d = c.run();
  EXPECT_FALSE(finding(d, "memory-bound-below-roof"));
  EXPECT_FALSE(finding(d, "memory-bound-at-roof"));
  Case compute;  // the SMs busier than DRAM: not the memory branch
  compute.kernel.metrics[m::sm_pct] = 90;
  EXPECT_FALSE(finding(compute.run(), "memory-bound-below-roof"));
}

TEST(RoofNodes, TheDetailNamesTheGap) {
  const auto detail = [](Case& c) {
    const auto d = c.run();
    const Finding* f = finding(d, "memory-bound-below-roof");
    return f ? f->detail : std::string("(no memory-bound-below-roof)");
  };
  Case in_flight;
  EXPECT_NE(detail(in_flight).find("too few bytes in flight per SM (128 B per global load "
                                   "request, 4 B per thread): warps wait on memory results 60% "
                                   "and at barriers 20% of their cycles"),
            std::string::npos)
      << detail(in_flight);
  Case few_warps;
  few_warps.kernel.metrics[m::warps_active_pct] = 30;
  EXPECT_NE(detail(few_warps).find("too few warps"), std::string::npos) << detail(few_warps);
  Case tail;
  tail.kernel.attributes.grid_blocks = 132 * 8 + 1;  // one wave and one block
  EXPECT_NE(detail(tail).find("a partial last wave"), std::string::npos) << detail(tail);
}

TEST(RoofNodes, TheOtherProblemsOfTheMemoryBranchRankFirst) {
  Case c;
  c.variant.roof_fraction = 0.5;  // severity 0.5, score 0.7
  c.kernel.metrics[m::shld_inst] = 1e6;
  c.kernel.metrics[m::shld_wavefronts] = 2e6;  // 1 excess per instruction: 0.5, score 0.7
  c.kernel.metrics[m::shst_inst] = 1e6;
  c.kernel.metrics[m::shst_wavefronts] = 1e6;
  const auto d = c.run();
  ASSERT_GE(d.findings.size(), 2u);
  EXPECT_EQ(d.findings[0].id, "shared-bank-conflicts") << "a cause before the symptom";
  EXPECT_EQ(d.findings[1].id, "memory-bound-below-roof");
  EXPECT_GT(d.findings[1].score, walk::kStandingScore + 0.05)
      << "a problem, not a standing finding";
}

}  // namespace
}  // namespace gpulab::report
