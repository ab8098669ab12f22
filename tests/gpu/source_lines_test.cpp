// Source lines on a real GPU: `run --source` puts per-instruction counters and warp-stall
// samples on the lines of each kernel. The naive transpose's column-strided store is where its
// samples are, with 32 sectors per request; and in every lab whose lesson is a line, the
// principal finding of its baseline names the line the lab marks `// PROBLEM:` first, while its
// optimized variant no longer has that finding.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gpu/lab_run.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/source/line_view.hpp"
#include "unit/lab_markers.hpp"

namespace gpulab {
namespace {

namespace c = report::source_counter;

bool names_file(const std::string& file, const std::string& suffix) {
  return file.size() >= suffix.size() &&
         file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0;
}

report::Report transpose_with_source() {
  app::RunSettings s;
  s.variants = "naive,padded";
  s.repeat = 3;
  s.warmup = 1;
  s.metrics = "full";
  s.source = true;
  return test::run_lab("transpose", s);
}

TEST(SourceLinesGpu, NaiveTransposeStrainsItsMarkedStore) {
  GPULAB_REQUIRE_GPU();
  auto r = transpose_with_source();
  ASSERT_EQ(r.variants.size(), 2u);
  const auto& naive = r.variants[0].kernels.at(0);
  ASSERT_TRUE(naive.source) << "no source collected; warnings: " << r.warnings.size();
  const auto& source = *naive.source;
  for (const auto& note : source.notes) ADD_FAILURE() << "note: " << note;
  ASSERT_TRUE(source.has_lines());
  ASSERT_TRUE(source.sampling);
  EXPECT_GT(source.sampling->samples, 1000u);

  const report::LineView view = report::lines_of(source);
  EXPECT_EQ(view.weight, c::samples);
  const auto hot = report::hottest(view, 3);
  ASSERT_FALSE(hot.empty());
  EXPECT_TRUE(names_file(hot[0]->where.file, "labs/transpose.cu")) << hot[0]->where.file;
  EXPECT_EQ(hot[0]->where.line, test::naive_store_line());
  const auto figures = report::figures_of(*hot[0], view);
  ASSERT_TRUE(figures.sectors_per_request);
  EXPECT_GT(*figures.sectors_per_request, 28.0) << "a column-strided store: 32 sectors a request";

  report::diagnose_report(r, report::Thresholds{});
  const auto& findings = r.variants[0].kernels.at(0).diagnosis->findings;
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].id, "uncoalesced-global");
  ASSERT_FALSE(findings[0].lines.empty());
  EXPECT_EQ(findings[0].lines[0].line, test::naive_store_line());
}

TEST(SourceLinesGpu, PaddedTransposeStoresInFullSectors) {
  GPULAB_REQUIRE_GPU();
  const auto r = transpose_with_source();
  ASSERT_EQ(r.variants.size(), 2u);
  const auto& padded = r.variants[1].kernels.at(0);
  ASSERT_TRUE(padded.source);
  const report::LineView view = report::lines_of(*padded.source);
  double worst = 0;
  for (const auto& row : view.rows)
    if (auto f = report::figures_of(row, view); f.sectors_per_request)
      worst = std::max(worst, *f.sectors_per_request);
  EXPECT_GT(worst, 0.0);
  EXPECT_LE(worst, 4.5) << "every global access of the padded variant is coalesced";
}

// A lab whose baseline's principal finding sits on a line: the variant, the finding (as the H100
// and H200 fixtures diagnose it), which of the lab's marked lines it sits on, and the optimized
// variant that removes it. The reduction lab is not here: its interleaved variant's principal
// finding is sync-overhead, on the barrier, while its marked line is the shared access.
struct LineShaped {
  const char* lab;
  const char* baseline;
  const char* finding;
  std::size_t mark;  // index among the file's `// PROBLEM:` lines
  const char* optimized;
};

const std::vector<LineShaped>& line_shaped_labs() {
  static const std::vector<LineShaped> labs = {
      {"transpose", "naive", "uncoalesced-global", 0, "padded"},
      {"transpose", "tiled", "shared-bank-conflicts", 1, "padded"},
      {"coalescing", "strided", "uncoalesced-global", 0, "contiguous"},
      {"aos-soa", "aos", "uncoalesced-global", 0, "soa"},
      {"divergence", "divergent", "warp-divergence", 0, "branchless"},
      {"matmul", "naive", "latency-bound", 0, "register-tiled"},
      {"async-copy", "sync-tiles", "latency-bound", 0, "pipelined"},
  };
  return labs;
}

// labs/<lab>.cu, the lab's name with '_' for '-'.
std::filesystem::path lab_file(std::string lab) {
  for (auto& ch : lab)
    if (ch == '-') ch = '_';
  return test::kSourceRoot / "labs" / (lab + ".cu");
}

const report::Variant& variant(const report::Report& r, const std::string& name) {
  for (const auto& v : r.variants)
    if (v.name == name) return v;
  throw std::runtime_error("no variant " + name);
}

TEST(SourceLinesGpu, EveryLineShapedLabsPrincipalFindingNamesItsMarkedLineFirst) {
  GPULAB_REQUIRE_GPU();
  for (const auto& l : line_shaped_labs()) {
    SCOPED_TRACE(std::string(l.lab) + "/" + l.baseline);
    app::RunSettings s;
    s.variants = std::string(l.baseline) + "," + l.optimized;
    s.repeat = 3;
    s.warmup = 1;
    s.metrics = "full";
    s.source = true;
    auto r = test::run_lab(l.lab, s);
    report::diagnose_report(r, report::Thresholds{});
    const int marked = test::marked_lines(lab_file(l.lab)).at(l.mark);

    const auto& base = variant(r, l.baseline).kernels.at(0);
    ASSERT_TRUE(base.source && base.source->has_lines()) << "no lines collected";
    ASSERT_TRUE(base.diagnosis && !base.diagnosis->findings.empty());
    const auto& principal = base.diagnosis->findings.front();
    EXPECT_EQ(principal.id, l.finding);
    ASSERT_FALSE(principal.lines.empty()) << principal.id << " names no line";
    EXPECT_TRUE(names_file(principal.lines[0].file, lab_file(l.lab).filename().string()))
        << principal.lines[0].file;
    EXPECT_EQ(principal.lines[0].line, marked) << principal.lines[0].what;

    for (const auto& k : variant(r, l.optimized).kernels) {
      ASSERT_TRUE(k.diagnosis);
      for (const auto& f : k.diagnosis->findings)
        EXPECT_NE(f.id, l.finding) << l.optimized << " still has it";
    }
  }
}

}  // namespace
}  // namespace gpulab
