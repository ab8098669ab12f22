// Library kernels' names run to hundreds of characters and often differ only near their end or
// in their middle (cuBLAS's sm80_xmma_gemm_... kernels differ in the tile size). Wherever gpulab
// shows them cut, two different names read differently: in the text report, in the HTML page
// (the whole name on hover) and in the Perfetto trace (whole). A reason every row shares is said
// once.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reports/kernel_name.hpp"
#include "reports/render/escape.hpp"
#include "reports/render/render_html.hpp"
#include "reports/render/render_text.hpp"
#include "reports/render/trace_events.hpp"
#include "reports/report.hpp"
#include "reports/timeline.hpp"

namespace gpulab::report {
namespace {

// Two 200-character instantiations sharing their first 150 characters, and two cuBLAS-style
// names that share their head and their tail.
const std::string kHead = "cutlass::Kernel<cutlass::gemm::GemmUniversal<" + std::string(105, 'p');
const std::vector<std::string> kNames = {
    kHead + std::string(49, 'a') + ">", kHead + std::string(49, 'b') + ">",
    "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_"
    "alignc4_execute_kernel__5x_cublas",
    "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_"
    "alignc4_execute_kernel__5x_cublas"};
constexpr const char* kNoReference =
    "a profiled program's kernel has no reference to check against";

Report program_of_long_names() {
  Report r;
  r.program.emplace();
  r.program->argv = {"./app"};
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    Variant& v = r.variants.emplace_back();
    v.name = kNames[i];
    v.description = "void " + kNames[i] + "(float*)";
    v.role = Role::function;
    v.status = VariantStatus::ok;
    v.timing.median = 1e-3 * static_cast<double>(i + 1);
    v.check.status = CheckStatus::skipped;
    v.check.message = kNoReference;
    v.totals.emplace();
    v.totals->launches = v.totals->timed_launches = 1;
    v.totals->total_seconds = v.timing.median;
  }
  return r;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(LongNames, CutApartTheyStayDifferentAtEveryWidth) {
  for (const std::size_t width : {20, 26, 40, 56, 60}) {
    const auto cut = shortened_apart(kNames, width);
    for (std::size_t i = 0; i < cut.size(); ++i) {
      EXPECT_LE(cut[i].size(), width + 4) << cut[i];  // "…" is 3 bytes, each at most twice
      for (std::size_t j = 0; j < i; ++j) EXPECT_NE(cut[i], cut[j]) << width;
    }
  }
  // The same name twice reads the same; a short name as it is.
  EXPECT_EQ(shortened_apart({"a", "a", "b"}, 20), (std::vector<std::string>{"a", "a", "b"}));
}

TEST(LongNames, TheTextReportsFunctionsReadDifferently) {
  const std::string text = render_text(program_of_long_names());
  for (const auto& cut : shortened_apart({display_name("void " + kNames[0] + "(float*)"),
                                          display_name("void " + kNames[1] + "(float*)"),
                                          display_name("void " + kNames[2] + "(float*)"),
                                          display_name("void " + kNames[3] + "(float*)")},
                                         56))
    EXPECT_EQ(count(text, cut + " "), 1u) << cut << "\n" << text;
  EXPECT_EQ(text.find(kNames[0]), std::string::npos) << "cut, not whole";
}

TEST(LongNames, TheHtmlPageCutsThemApartAndShowsThemWholeOnHover) {
  const std::string html = render_html({program_of_long_names()}, HtmlPage{});
  for (const auto& name : kNames) {
    const std::string escaped = html_safe(name);
    EXPECT_NE(html.find("<title>" + escaped + "</title>"), std::string::npos) << "the bar's label";
    EXPECT_NE(html.find("<span title=\"" + escaped + "\">"), std::string::npos)
        << "the table's cell";
  }
  for (const auto& cut : shortened_apart(kNames, 26))
    EXPECT_EQ(count(html, "</title>" + html_safe(cut) + "</text>"), 1u) << cut;
  EXPECT_EQ(count(html, kNoReference), 0u) << "the apostrophe is escaped: " << html.size();
  EXPECT_EQ(count(html, "a profiled program&#39;s kernel has no reference"), 1u)
      << "a reason all four rows share is said once";
  EXPECT_NE(html.find("4 variants: a profiled program&#39;s kernel"), std::string::npos);
}

TEST(LongNames, ThePerfettoTraceKeepsThemWhole) {
  Report r = program_of_long_names();
  auto& t = r.variants.front().timeline.emplace();
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    Activity& a = t.activities.emplace_back();
    a.name = kNames[i];
    a.stream = 7;
    a.start = 1e-3 * static_cast<double>(i);
    a.end = a.start + 5e-4;
  }
  const auto trace = trace_events(r);
  std::vector<std::string> names;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X") names.push_back(e["name"].get<std::string>());
  EXPECT_EQ(names, kNames);
}

}  // namespace
}  // namespace gpulab::report
