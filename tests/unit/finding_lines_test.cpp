// A finding names its lines: where a kernel has per-instruction data, each finding whose rule
// measures lines names the (at most three) lines that hold most of its evidence.
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/base/input_file.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/diagnosis/finding_lines.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "unit/lab_markers.hpp"
#include "unit/run_cli.hpp"

namespace gpulab::report {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = test::kSourceRoot;
const std::string kHandMade = test::kHandMadeSource;

const Finding* finding(const Diagnosis& d, const std::string& id) {
  for (const auto& f : d.findings)
    if (f.id == id) return &f;
  return nullptr;
}

TEST(FindingLines, TheUncoalescedStoreIsNamedWithItsShare) {
  Report r = load_report(kHandMade);
  diagnose_report(r, Thresholds());
  const auto& d = *r.variants.at(0).kernels.at(0).diagnosis;
  const auto* f = finding(d, "uncoalesced-global");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->lines.size(), 1u) << "the load moves 4 sectors per request: no excess there";
  EXPECT_EQ(f->lines[0].file, "labs/transpose.cu");
  EXPECT_EQ(f->lines[0].line, test::naive_store_line());
  EXPECT_DOUBLE_EQ(f->lines[0].share, 1.0);
  EXPECT_EQ(f->lines[0].what, "the global sectors beyond 4 per request");
  EXPECT_EQ(f->lines[0].detail, "32.0 sectors per request") << "the line's worst instruction";
  EXPECT_EQ(d.findings.front().id, "uncoalesced-global") << "the ranking is the tree's";

  // In the text, and through the JSON.
  const auto text = test::run_cli({"diagnose", "--report", kHandMade});
  EXPECT_NE(text.out.find("     at labs/transpose.cu:" + std::to_string(test::naive_store_line()) +
                          ": 100.0% of the global sectors beyond 4 per request, 32.0 sectors per "
                          "request\n"),
            std::string::npos)
      << text.out;
  const Report back = from_json(nlohmann::json::parse(to_json(r).dump()));
  EXPECT_EQ(back.variants[0].kernels[0].diagnosis->findings.front().lines.at(0).line,
            test::naive_store_line());
}

TEST(FindingLines, AStallFindingNamesItsTopLinesInOrder) {
  KernelSource s;
  s.origin = "hand-made";
  const auto add = [&s](int line, double waits) {
    SassInstruction i;
    i.offset = 16 * s.instructions.size();
    i.sass = "LDG.E R2, desc[UR4][R2.64]";
    i.where = SourceLine{"k.cu", line, "", 0};
    i.counters = {{"samples", waits + 1}, {"samples.long_scoreboard", waits}};
    s.instructions.push_back(i);
  };
  for (auto [line, waits] : {std::pair{10, 5.0}, {11, 60.0}, {12, 0.0}, {13, 25.0}, {14, 10.0}})
    add(line, waits);
  add(11, 0);  // a second instruction of line 11
  s.instructions.push_back({0x200, "EXIT", std::nullopt, {{"samples.long_scoreboard", 0}}});
  Diagnosis d;
  Finding latency, tail;
  latency.id = "latency-bound";
  tail.id = "tail-effect";  // not line-shaped
  d.findings = {latency, tail};
  attach_lines(d, s);
  const auto& lines = d.findings[0].lines;
  ASSERT_EQ(lines.size(), kLinesPerFinding);
  EXPECT_EQ(lines[0].line, 11);
  EXPECT_DOUBLE_EQ(lines[0].share, 0.6);
  EXPECT_EQ(lines[1].line, 13);
  EXPECT_EQ(lines[2].line, 14);
  EXPECT_EQ(lines[0].what, "the warps' long_scoreboard stall samples");
  EXPECT_EQ(lines[0].detail, "97% of the line's samples");  // 60 of its 62
  EXPECT_TRUE(d.findings[1].lines.empty());
}

// The divergence lab's shape: one branch (line 89) splits the warps, and the path after it
// (line 56) runs with half its lanes idle. The branch is named where divergent branches were
// counted; the idle lanes' line only where they were not.
TEST(FindingLines, DivergenceNamesTheBranchThatSplitsTheWarps) {
  const auto kernel = [](bool counted_branches) {
    KernelSource s;
    s.origin = "hand-made";
    const auto add = [&](int line, const char* sass, double warps, double threads,
                         double divergent) {
      SassInstruction i;
      i.offset = 16 * s.instructions.size();
      i.sass = sass;
      i.where = SourceLine{"labs/divergence.cu", line, "", 0};
      i.counters = {{"inst_executed", warps}, {"thread_inst_executed", threads}};
      if (counted_branches) i.counters["divergent_branches"] = divergent;
      s.instructions.push_back(i);
    };
    add(89, "@!P0 BRA 0x940", 1000, 32000, 1000);
    for (int k = 0; k < 4; ++k) add(56, "FFMA R0, R0, R2, R3", 1000, 16000, 0);
    add(114, "STG.E desc[UR4][R2.64], R0", 1000, 32000, 0);
    return s;
  };
  for (bool counted_branches : {true, false}) {
    SCOPED_TRACE(counted_branches ? "divergent branches counted" : "not counted");
    Diagnosis d;
    Finding divergence;
    divergence.id = "warp-divergence";
    d.findings = {divergence};
    attach_lines(d, kernel(counted_branches));
    const auto& lines = d.findings[0].lines;
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0].line, counted_branches ? 89 : 56);
    EXPECT_DOUBLE_EQ(lines[0].share, 1.0);
    EXPECT_EQ(lines[0].what, counted_branches ? "the divergent branches"
                                              : "the idle lanes of the warps' instructions");
    EXPECT_EQ(lines[0].detail, counted_branches ? "1000 branch executions split their warp"
                                                : "16.0 active threads per instruction");
  }
}

TEST(FindingLines, NoPerInstructionDataNoLines) {
  Report r = load_report((kRoot / "tests/fixtures/labs/transpose.json").string());
  diagnose_report(r, Thresholds());
  for (const auto& v : r.variants)
    for (const auto& k : v.kernels)
      if (k.diagnosis)
        for (const auto& f : k.diagnosis->findings) EXPECT_TRUE(f.lines.empty()) << f.id;
}

}  // namespace
}  // namespace gpulab::report
