// `gpulab profile` without a GPU: the program runs as gpulab's child with its arguments, stdin
// and stdout, gpulab exits with its status, and the report says how it ended. A program that
// writes records where the injection library would (the folder named in the environment) stands
// in for a CUDA program.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "unit/shell_command.hpp"
#include "unit/temp_folder.hpp"

namespace gpulab {
namespace {

const std::string kBinary = GPULAB_BINARY;

using test::sh;

TEST(ProfileCommand, ArgumentsStdinAndStdoutPassThroughAndTheStatusIsTheProgramsToo) {
  test::TempFolder folder;
  const std::string json = folder / "args.json";
  const auto out =
      sh("echo from-stdin | " + kBinary + " profile --json " + json +
         " -- /bin/sh -c 'read line; printf \"%s|\" \"$line\" \"$@\"; exit 3' sh a 'b c' -d");
  EXPECT_EQ(out.code, 3) << out.text;
  EXPECT_EQ(out.text.rfind("from-stdin|a|b c|-d|", 0), 0u) << "the program's output first:\n"
                                                           << out.text;
  EXPECT_NE(out.text.find("exited with status 3"), std::string::npos) << out.text;
  const report::Report r = report::load_report(json);
  ASSERT_TRUE(r.program);
  EXPECT_EQ(r.program->argv.front(), "/bin/sh");
  EXPECT_EQ(r.program->argv.back(), "-d");
  EXPECT_EQ(r.program->exit_code, 3);
  EXPECT_EQ(r.program->launches, 0);
  EXPECT_TRUE(r.variants.empty());
}

// Parsing stops at the program, as for `timeout` and `nohup`: its options are its own.
TEST(ProfileCommand, EveryWordFromTheProgramOnIsTheProgramsOwn) {
  struct Case {
    std::string args, prints;
  };
  const Case cases[] = {
      {"/bin/echo -d hello", "-d hello\n"},
      {"-- /bin/echo -d hello", "-d hello\n"},
      {"--replay none /bin/echo --json x -c 3", "--json x -c 3\n"},
      {"-c 3 /bin/echo -c", "-c\n"},
      {"--launch-count=3 /bin/echo -- -k", "-- -k\n"},
      {"-d -- /bin/echo --", "--\n"},
      {"--trace /bin/echo -d", "-d\n"},
  };
  for (const auto& c : cases) {
    const auto out = sh(kBinary + " profile " + c.args + " 2>&1");
    EXPECT_EQ(out.code, 0) << c.args << "\n" << out.text;
    EXPECT_EQ(out.text.rfind(c.prints, 0), 0u) << c.args << "\n" << out.text;
  }
}

TEST(ProfileCommand, ASignalEndsTheProgramAndTheReportSaysWhich) {
  test::TempFolder folder;
  const std::string json = folder / "signal.json";
  const auto out = sh(kBinary + " profile --json " + json + " -- /bin/sh -c 'kill -TERM $$' 2>&1");
  EXPECT_EQ(out.code, 128 + 15) << out.text;
  const report::Report r = report::load_report(json);
  EXPECT_EQ(r.program->signal, "SIGTERM");
  EXPECT_FALSE(r.program->exit_code);
  EXPECT_EQ(r.program->ended, "killed by SIGTERM");
}

// The stand-in for a CUDA program (tests/stand_in/stand_in_program.cpp) writes, where the
// injection library would, a process record and two launches of one kernel (one profiled, with no
// counters asked for), and no end record, as if killed.
TEST(ProfileCommand, RecordsInTheFolderBecomeTheReport) {
  test::TempFolder folder;
  const std::string json = folder / "records.json";
  const auto out = sh("TMPDIR=" + folder.path + " " + kBinary + " profile --replay none --json " +
                      json + " -- " + GPULAB_STAND_IN + " 2>&1");
  EXPECT_EQ(out.code, 0) << out.text;
  const report::Report r = report::load_report(json);
  ASSERT_EQ(r.variants.size(), 1u) << out.text;
  const auto& v = r.variants[0];
  EXPECT_EQ(v.name, "kernel");
  EXPECT_EQ(v.totals->launches, 2);
  EXPECT_NEAR(v.totals->total_seconds, 3e-6, 1e-12);
  EXPECT_EQ(r.program->replay, "none");
  ASSERT_EQ(r.program->processes.size(), 1u);
  EXPECT_FALSE(r.program->processes[0].complete) << "no end record";
  EXPECT_NE(out.text.find("kernel"), std::string::npos) << "the functions table:\n" << out.text;
}

// A program that launched no kernel leaves a report with nothing to diagnose: said in one line.
TEST(ProfileCommand, AReportWithNoKernelsSaysSoWhenDiagnosed) {
  test::TempFolder folder;
  const std::string json = folder / "none.json";
  const auto run = sh("TMPDIR=" + folder.path + " " + kBinary + " profile --replay none --json " +
                      json + " -- true 2>&1");
  ASSERT_EQ(run.code, 0) << run.text;
  const auto out = sh(kBinary + " diagnose --report " + json + " 2>&1");
  EXPECT_EQ(out.code, 2) << out.text;
  EXPECT_EQ(out.text, "gpulab: error: '" + json +
                          "' holds no kernels to diagnose: the program launched none\n");
}

TEST(ProfileCommand, BadInvocationsAreOneLineUsageErrors) {
  struct Case {
    std::string args;
    std::string says;
  };
  const Case cases[] = {
      {"profile", "needs a program"},
      {"profile --kernel '(' -- true", "is not a regular expression"},
      {"profile --launch-count 0 -- true", "--launch-count 0 is not a count"},
      {"profile --launch-count many -- true", "--launch-count"},
      {"profile --trace --metrics full -- true", "a traced run collects no counters"},
      {"profile --replay user -- true", "--replay"},
      {"profile --replay none --metrics basic -- true", "collects no counters"},
      {"profile --kernel-timeout -5 -- true", "--kernel-timeout"},
      {"profile --metrics nosuch -- true", "unknown metric"},
      {"profile --nvtx-include 'a//b' -- true",
       "--nvtx-include \"a//b\": an empty range name at character 3"},
      {"profile --nvtx-include ok/ --nvtx-exclude '[a,b' -- true",
       "--nvtx-exclude \"[a,b\": '[', ']' and a final '/' mark push/pop ranges"},
      {"profile --capture-range cudaProfilerStart -- true", "--capture-range"},
      {"profile --trace --nvtx-include a/ -- true", "--trace records the whole timeline"},
      {"profile --trace --capture-range cudaProfilerApi -- true",
       "--trace records the whole timeline"},
  };
  for (const auto& c : cases) {
    const auto out = sh(kBinary + " " + c.args + " 2>&1");
    EXPECT_EQ(out.code, 2) << c.args << "\n" << out.text;
    EXPECT_NE(out.text.find(c.says), std::string::npos) << c.args << "\n" << out.text;
    EXPECT_EQ(std::count(out.text.begin(), out.text.end(), '\n'), 1) << c.args << "\n" << out.text;
  }
}

// A malformed NVTX expression is refused before anything runs: the program leaves no mark.
TEST(ProfileCommand, AMalformedNvtxExpressionStopsBeforeTheProgramStarts) {
  test::TempFolder folder;
  const std::string mark = folder / "ran";
  const auto out = sh(kBinary + " profile --nvtx-include 'A/*/' -- touch " + mark + " 2>&1");
  EXPECT_EQ(out.code, 2) << out.text;
  EXPECT_EQ(out.text,
            "gpulab: error: --nvtx-include \"A/*/\": a '*' needs a range name on each side "
            "(A/*/B) at character 3\n");
  EXPECT_NE(::access(mark.c_str(), F_OK), 0) << "the program ran";
}

}  // namespace
}  // namespace gpulab
