// `gpulab source`: a kernel's source with its hot lines, from the hand-made fixture
// (tests/fixtures/source: the naive transpose's real line table, per-instruction counters made up
// by hand, as its warnings say) and from code without line information.
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "reports/base/input_file.hpp"
#include "reports/render/render_source.hpp"
#include "reports/render/table.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "unit/lab_markers.hpp"
#include "unit/run_cli.hpp"

namespace gpulab::report {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = test::kSourceRoot;
const std::string kHandMade = test::kHandMadeSource;

// Runs `gpulab ARGS` from the repository root, where the line table's relative paths point.
test::CliResult from_root(const std::vector<std::string>& args) {
  const auto previous = fs::current_path();
  fs::current_path(kRoot);
  auto r = test::run_cli(args);
  fs::current_path(previous);
  return r;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(SourceCommand, TheMarkedLineComesFirstWithItsCounters) {
  const auto r = from_root({"source", "--report", kHandMade});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto out = lines(r.out);
  ASSERT_GE(out.size(), 4u) << r.out;
  EXPECT_EQ(out[0], "naive / transpose_naive") << "the function is named when it differs";
  EXPECT_NE(out[1].find("lines from hand-made; hot by samples"), std::string::npos) << out[1];
  // The hot lines come first, hottest first: the marked store, 32 sectors per request.
  const std::string where = "labs/transpose.cu:" + std::to_string(test::naive_store_line());
  EXPECT_EQ(out[2].rfind(">> " + where + " ", 0), 0u) << out[2];
  EXPECT_NE(out[2].find("long_scoreboard"), std::string::npos) << out[2];
  EXPECT_NE(out[2].find("32.0 sectors/req"), std::string::npos)
      << "its load's 4 and its store's 32: the worst shows " << out[2];
  // Then the file, the marked line's text beside its number and marked, the rest folded.
  EXPECT_NE(
      r.out.find(">>   " + std::to_string(test::naive_store_line()) + "      if (row < rows) out["),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("⋮"), std::string::npos) << "folded lines";
  EXPECT_EQ(out[3], "") << "one hot line: the others hold under 5% of the samples each";
  EXPECT_EQ(r.out.find("/*0"), std::string::npos) << "no SASS without --sass";
}

TEST(SourceCommand, EveryLineFitsAHundredColumns) {
  for (const auto& args : {std::vector<std::string>{"source", "--report", kHandMade},
                           {"source", "--report", kHandMade, "--sass"}}) {
    const auto r = from_root(args);
    ASSERT_EQ(r.code, 0) << r.err;
    for (const auto& line : lines(r.out)) EXPECT_LE(display_width(line), 100u) << line;
  }
}

TEST(SourceCommand, SassShowsEachLinesInstructionsUnderIt) {
  const auto r = from_root({"source", "--report", kHandMade, "--sass"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto store = r.out.find("STG.E");
  ASSERT_NE(store, std::string::npos) << r.out;
  EXPECT_GT(store, r.out.find("if (row < rows) out[")) << "under its line";
  EXPECT_NE(r.out.find("32.0 sectors/req", store), std::string::npos) << "its own counters";
}

TEST(SourceCommand, CodeWithoutLinesIsShownByInstructionWithTheHint) {
  KernelSource s;
  s.function = "_Z7libraryv";
  s.origin = "nvdisasm";
  for (int k = 0; k < 14; ++k) {
    SassInstruction i;
    i.offset = 16 * k;
    i.sass = k == 5 ? "LDG.E R2, desc[UR4][R2.64]" : "IMAD R0, R1, R2, R3";
    i.counters = {{"samples", k == 5 ? 90.0 : 1.0}};
    s.instructions.push_back(i);
  }
  const auto text = render_source(
      "library", s, {}, [](const std::string&) { return std::nullopt; }, Style());
  EXPECT_NE(text.find("no line information: build the kernel with -lineinfo"), std::string::npos)
      << text;
  const auto out = lines(text);
  ASSERT_GE(out.size(), 4u);
  EXPECT_EQ(out[3].rfind("  /*0050*/ LDG.E", 0), 0u) << "the hottest instruction first: " << out[3];
  EXPECT_NE(text.find("4 more (--sass shows every one)"), std::string::npos) << text;
  SourceViewOptions all;
  all.sass = true;
  EXPECT_EQ(lines(render_source(
                      "library", s, all, [](const std::string&) { return std::nullopt; }, Style()))
                .size(),
            3u + 14u);
}

TEST(SourceCommand, ColorsOnlyWhenTheStyleAsks) {
  const Report r = load_report(kHandMade);
  const auto& source = *r.variants.at(0).kernels.at(0).source;
  const auto none = [](const std::string&) { return std::optional<std::string>(); };
  Style plain, colored;
  colored.color = true;
  EXPECT_EQ(render_source("k", source, {}, none, plain).find('\033'), std::string::npos);
  EXPECT_NE(render_source("k", source, {}, none, colored).find("\033["), std::string::npos);
  EXPECT_NE(render_source("k", source, {}, none, plain).find("(source not found"),
            std::string::npos);
}

TEST(SourceCommand, ALabNeedsAGpuOrAReport) {
  const auto r = test::run_cli({"source", "transpose", "--variant", "naive"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("source transpose: measuring needs a GPU (no usable GPU"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("gpulab source --report FILE"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  const auto neither = test::run_cli({"source"});
  EXPECT_EQ(neither.code, 2);
  EXPECT_NE(neither.err.find("source needs a lab to measure or --report FILE"), std::string::npos);
  const auto old = test::run_cli(
      {"source", "--report", (kRoot / "tests/fixtures/transpose_h200.json").string()});
  EXPECT_EQ(old.code, 2);
  EXPECT_NE(old.err.find("no kernel holds per-instruction data"), std::string::npos) << old.err;
  const auto missing = test::run_cli({"source", "--report", kHandMade, "--kernel", "nosuch"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("has no kernel named nosuch"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace gpulab::report
