// Source lines on a real GPU: `run --source` puts per-instruction counters and warp-stall
// samples on the lines of each kernel, and the naive transpose's problem on the line the lab
// marks: its column-strided store is where the samples are, with 32 sectors per request, and
// the principal finding names that line first.
#include <filesystem>
#include <string>

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
  const auto figures = report::figures_of(hot[0]->counters, view);
  ASSERT_TRUE(figures.sectors_per_request);
  EXPECT_GT(*figures.sectors_per_request, 16.0) << "a column-strided store: 32 sectors a request";

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
    if (auto f = report::figures_of(row.counters, view); f.sectors_per_request)
      worst = std::max(worst, *f.sectors_per_request);
  EXPECT_GT(worst, 0.0);
  EXPECT_LE(worst, 4.5) << "every global access of the padded variant is coalesced";
}

}  // namespace
}  // namespace gpulab
