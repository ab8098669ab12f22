// `gpulab profile --source` without a GPU: the per-instruction records the injection writes for
// each profiled function's first profiled launch (reports/source_records.hpp) become that
// launch's `source` in the report, which `gpulab source --report` shows by line. The stand-in
// (tests/stand_in/stand_in_program.cpp) writes them as the injection does, from the transpose
// lab's source data and counters recorded on an H100.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "reports/principal.hpp"
#include "reports/profile_records.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "unit/shell_command.hpp"
#include "unit/temp_folder.hpp"

namespace gpulab {
namespace {

const std::string kBinary = GPULAB_BINARY;
const std::string kFixtures = GPULAB_FIXTURES_DIR;

using test::sh;

// The transpose lab's five kernels, launched twice each (10 launches, every one profiled).
std::string profile_transpose(const test::TempFolder& folder, const std::string& options,
                              const std::string& json) {
  return "env TMPDIR=" + folder.path + " " + kBinary + " profile " + options +
         " --launch-count all --json " + json + " -- " + GPULAB_STAND_IN +
         " --launches 10 --counters-from " + kFixtures + "/labs-h100/transpose.json" +
         " --source-from " + kFixtures + "/source/transpose.h100.json 2>&1";
}

TEST(ProfileSource, EachFunctionsFirstProfiledLaunchCarriesItsSourceShownByLine) {
  test::TempFolder folder;
  const std::string json = folder / "source.json";
  const auto out = sh(profile_transpose(folder, "--source --diagnose", json));
  ASSERT_EQ(out.code, 0) << out.text;
  // The diagnosis names the strided store, whichever of the function's launches is longer.
  EXPECT_NE(out.text.find("at labs/transpose.cu:45: 100.0% of the global sectors beyond 4"),
            std::string::npos)
      << out.text;
  const report::Report r = report::load_report(json);
  const report::Report recorded = report::load_report(kFixtures + "/source/transpose.h100.json");
  ASSERT_EQ(r.variants.size(), 5u) << out.text;
  int with_source = 0;
  for (const auto& v : r.variants) {
    ASSERT_EQ(v.kernels.size(), 2u) << v.name;
    EXPECT_TRUE(v.kernels[0].source) << v.name << ": its first profiled launch";
    EXPECT_FALSE(v.kernels[1].source) << v.name << ": one launch of a function is enough";
    if (!v.kernels[0].source) continue;
    ++with_source;
    EXPECT_EQ(v.kernels[0].source->function, v.kernels[0].mangled_name);
  }
  EXPECT_EQ(with_source, 5);
  EXPECT_TRUE(r.program->source);
  for (const auto& line : r.program->left_out)
    EXPECT_EQ(line.find("per-instruction"), std::string::npos) << line;

  // The naive transpose's source, as recorded: every instruction, line and counter.
  const report::KernelSource* naive = nullptr;
  for (const auto& v : r.variants)
    if (v.kernels[0].function.find("transpose_naive") != std::string::npos)
      naive = v.kernels[0].source ? &*v.kernels[0].source : nullptr;
  ASSERT_NE(naive, nullptr);
  const report::KernelSource& expected = *recorded.variants[0].kernels[0].source;
  ASSERT_EQ(naive->instructions.size(), expected.instructions.size());
  for (std::size_t i = 0; i < expected.instructions.size(); ++i) {
    EXPECT_EQ(naive->instructions[i].offset, expected.instructions[i].offset);
    EXPECT_EQ(naive->instructions[i].where, expected.instructions[i].where);
    EXPECT_EQ(naive->instructions[i].counters, expected.instructions[i].counters);
  }
  ASSERT_TRUE(naive->sampling);
  EXPECT_EQ(naive->sampling->samples, expected.sampling->samples);
  EXPECT_EQ(naive->sampling->period_cycles, 1024u);

  // By line: the strided store holds most of the samples.
  const auto shown = sh(kBinary + " source --report " + json + " --kernel transpose_naive 2>&1");
  ASSERT_EQ(shown.code, 0) << shown.text;
  EXPECT_NE(shown.text.find(">> labs/transpose.cu:45"), std::string::npos) << shown.text;
}

TEST(ProfileSource, WithoutTheOptionNoLaunchCarriesASource) {
  test::TempFolder folder;
  const std::string json = folder / "plain.json";
  const auto out = sh(profile_transpose(folder, "", json));
  ASSERT_EQ(out.code, 0) << out.text;
  const report::Report r = report::load_report(json);
  ASSERT_EQ(r.variants.size(), 5u) << out.text;
  for (const auto& v : r.variants)
    for (const auto& k : v.kernels) EXPECT_FALSE(k.source) << v.name;
  const auto shown = sh(kBinary + " source --report " + json + " 2>&1");
  EXPECT_EQ(shown.code, 2) << shown.text;
  EXPECT_NE(shown.text.find("no kernel holds per-instruction data"), std::string::npos)
      << shown.text;
}

// Of one function's launches, the one with per-instruction data speaks for it, longer or not:
// its diagnosis names lines.
TEST(ProfileSource, ALaunchWithItsSourceSpeaksForItsFunction) {
  report::Variant v;
  for (double ns : {300.0, 100.0, 200.0}) {
    report::Kernel& k = v.kernels.emplace_back();
    k.mangled_name = "_Z1kPf";
    k.metrics["gpu__time_duration.sum"] = ns;
    k.diagnosis.emplace();
  }
  const auto longest = report::diagnosed_functions(v);
  ASSERT_EQ(longest.size(), 1u);
  EXPECT_EQ(longest[0].front(), &v.kernels[0]) << "without sources, the longest";
  v.kernels[1].source.emplace();
  const auto groups = report::diagnosed_functions(v);
  EXPECT_EQ(groups[0].front(), &v.kernels[1]);
  EXPECT_TRUE(report::speaks_before(v.kernels[1], v.kernels[0]));
  EXPECT_FALSE(report::speaks_before(v.kernels[2], v.kernels[0]));
}

// Asked for, but not recorded (the injection could not collect it): the report says for which
// functions, rather than showing nothing.
TEST(ProfileSource, FunctionsWithoutRecordedSourcesAreNamedInWhatWasLeftOut) {
  test::TempFolder folder;
  const std::string json = folder / "unrecorded.json";
  const auto out =
      sh("env TMPDIR=" + folder.path + " " + kBinary +
         " profile --source --launch-count all --json " + json + " -- " + GPULAB_STAND_IN +
         " --launches 10 --counters-from " + kFixtures + "/labs-h100/transpose.json 2>&1");
  ASSERT_EQ(out.code, 0) << out.text;
  const report::Report r = report::load_report(json);
  const auto& left_out = r.program->left_out;
  const auto said = std::find_if(left_out.begin(), left_out.end(), [](const std::string& l) {
    return l.rfind(
               "per-instruction data (--source) was not recorded for 5 of the 5 profiled "
               "functions: transpose_naive, ",
               0) == 0;
  });
  EXPECT_NE(said, left_out.end()) << out.text;
  EXPECT_NE(out.text.find("per-instruction data (--source) was not recorded"), std::string::npos)
      << "said in the text report too:\n"
      << out.text;
}

// CUPTI samples the modules that load while sampling is on, from the context's creation: with
// --source the program loads its modules eagerly, unless its environment says otherwise.
TEST(ProfileSource, TheProgramLoadsItsModulesEagerlyUnlessItSaysOtherwise) {
  test::TempFolder folder;
  const std::string print = " -- /bin/sh -c 'echo \"loading=$CUDA_MODULE_LOADING\"' 2>&1";
  const std::string gpulab = "env -u CUDA_MODULE_LOADING TMPDIR=" + folder.path + " " + kBinary;
  EXPECT_EQ(sh(gpulab + " profile --source" + print).text.rfind("loading=EAGER\n", 0), 0u);
  EXPECT_EQ(sh(gpulab + " profile" + print).text.rfind("loading=\n", 0), 0u);
  const std::string lazy = "env CUDA_MODULE_LOADING=LAZY TMPDIR=" + folder.path + " " + kBinary;
  EXPECT_EQ(sh(lazy + " profile --source" + print).text.rfind("loading=LAZY\n", 0), 0u);
}

report::KernelSource two_instructions() {
  report::KernelSource s;
  s.function = "_Z1kPf";
  s.origin = "cupti";
  s.notes = {"per-instruction counters: this GPU's CUPTI offers none for shared_wavefronts"};
  s.sampling = report::StallSampling{1024, 120, 3};
  report::SassInstruction a;
  a.offset = 0;
  a.where = report::SourceLine{"k.cu", 12, "", 0};
  a.counters = {{"inst_executed", 64}, {"samples", 100}, {"samples.long_scoreboard", 90}};
  report::SassInstruction b;
  b.offset = 16;
  b.sass = "EXIT";
  b.where = report::SourceLine{"inc.cuh", 3, "k.cu", 14};
  b.counters = {{"inst_executed", 8}, {"samples", 20}};
  s.instructions = {a, b};
  return s;
}

report::RecordSet read(const std::string& lines) {
  report::RecordSet set;
  std::istringstream in(lines);
  report::read_records(in, set);
  return set;
}

TEST(ProfileSource, RecordsReadBackAsTheSourceTheyWereWrittenFrom) {
  const report::KernelSource s = two_instructions();
  const report::RecordSet set = read(report::to_lines(41, 7, s));
  EXPECT_EQ(set.unreadable_lines, 0);
  ASSERT_EQ(set.sources.by_launch.count({41, 7}), 1u);
  const report::KernelSource& back = set.sources.by_launch.at({41, 7});
  EXPECT_EQ(back.function, s.function);
  EXPECT_EQ(back.origin, "cupti");
  EXPECT_EQ(back.notes, s.notes);
  ASSERT_TRUE(back.sampling);
  EXPECT_EQ(back.sampling->samples, 120u);
  EXPECT_EQ(back.sampling->dropped, 3u);
  ASSERT_EQ(back.instructions.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.instructions[i].offset, s.instructions[i].offset);
    EXPECT_EQ(back.instructions[i].sass, s.instructions[i].sass);
    EXPECT_EQ(back.instructions[i].where, s.instructions[i].where);
    EXPECT_EQ(back.instructions[i].counters, s.instructions[i].counters);
  }
}

// An instruction no source record announced, one past the count announced, or a negative
// offset is not a record: counted, and the rest is read.
TEST(ProfileSource, InstructionsBeyondWhatTheirSourceAnnouncedAreNotRecords) {
  const std::string lines = report::to_lines(41, 7, two_instructions());
  const std::string first_instruction = lines.substr(lines.find('\n') + 1);
  const std::string one = first_instruction.substr(0, first_instruction.find('\n') + 1);

  EXPECT_EQ(read(one).unreadable_lines, 1) << "no source record before it";
  const report::RecordSet extra = read(lines + one);
  EXPECT_EQ(extra.unreadable_lines, 1) << "a third instruction of two announced";
  EXPECT_EQ(extra.sources.by_launch.at({41, 7}).instructions.size(), 2u);

  std::string negative = one;
  negative.replace(negative.find("\"offset\":0"), 10, "\"offset\":-16");
  const report::RecordSet bad = read(lines.substr(0, lines.find('\n') + 1) + negative);
  EXPECT_EQ(bad.unreadable_lines, 1);
  EXPECT_TRUE(bad.sources.by_launch.at({41, 7}).instructions.empty());
}

}  // namespace
}  // namespace gpulab
