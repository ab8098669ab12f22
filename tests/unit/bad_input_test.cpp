// Bad input, command by command, through the real binary: every case must exit with the
// documented code (README "Exit codes"), say what is wrong in exactly one line on stderr
// ("gpulab: error: ..." naming the problem), print nothing on stdout, and leave no file behind.
// Each case runs in an empty folder of its own, so any file it writes (a report, a temporary
// file, one named after a swallowed option) is found.
#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "unit/run_binary.hpp"

namespace {

using gpulab::test::Outcome;
using gpulab::test::run_gpulab;

const std::string kFixtures = GPULAB_FIXTURES_DIR;
const std::string kTranspose = kFixtures + "/labs/transpose.json";
const std::string kMatmul = kFixtures + "/labs/matmul.json";
const std::string kNotAReport = kFixtures + "/README.md";

struct Case {
  std::vector<std::string> args;
  int code;              // the exit code
  std::string fragment;  // what the one line on stderr must contain
};

std::ostream& operator<<(std::ostream& os, const Case& c) {
  os << "gpulab";
  for (const auto& a : c.args) os << " '" << a << "'";
  return os;
}

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.emplace_back(e->d_name);
    ::closedir(d);
  }
  return names;
}

const std::vector<Case>& cases() {
  // One row per bad input, as a table reads: clang-format would fold the long ones.
  // clang-format off
  static const std::vector<Case> all = {
      // list
      {{"list", "--format", "html"}, 2, "'html' is not one of {text,json,markdown,csv}"},
      {{"list", "--format"}, 2, "--format"},
      {{"list", "--json"}, 2, "--json"},
      {{"list", "--json", "--metrics"}, 2, "'--metrics' is an option, not a value"},
      {{"list", "--json", ""}, 2, "--json: the value is empty"},
      {{"list", "--json", "/nonexistent-folder/labs.json"}, 2, "cannot write"},
      {{"list", "extra"}, 2, "extra"},
      // info
      {{"info", "--format", "csv"}, 2, "'csv' is not one of {text,json}"},
      {{"info", "--json", "--format", "json"}, 2, "'--format' is an option"},
      {{"info", "--json", ""}, 2, "the value is empty"},
      {{"info", "--check-metrics", ""}, 2, "the value is empty"},
      // run: the lab, its variants and parameters
      {{"run"}, 2, "run needs a lab"},
      {{"run", "nosuchlab"}, 2, "unknown lab 'nosuchlab'"},
      {{"run", "transpose", "--variant", "bogus"}, 2, "no variant 'bogus'"},
      {{"run", "transpose", "--variant", ""}, 2, "--variant: the value is empty"},
      {{"run", "transpose", "--variant", "tiled,,padded"}, 2, "an empty name in the list"},
      {{"run", "transpose", "--variant", "tiled,"}, 2, "an empty name in the list"},
      {{"run", "transpose", "--size", "0"}, 2, "--size 0 is out of range for lab 'transpose' (rows: allowed 1 to 32768)"},
      {{"run", "transpose", "--size", "-5"}, 2, "out of range"},
      {{"run", "transpose", "--size", "abc"}, 2, "'abc' is not an integer"},
      {{"run", "transpose", "--size", "1e3"}, 2, "'1e3' is not an integer"},
      {{"run", "transpose", "--size", "99999999999999999999"}, 2,
       "'99999999999999999999' is beyond the 64-bit integer range"},
      {{"run", "transpose", "--param", "cols"}, 2, "'cols' is not NAME=VALUE"},
      {{"run", "transpose", "--param", "=5"}, 2, "is not NAME=VALUE"},
      {{"run", "transpose", "--param", "cols=x"}, 2, "--param cols: 'x' is not an integer"},
      {{"run", "transpose", "--param", "cols=99999"}, 2, "--param cols=99999 is out of range for lab 'transpose' (allowed: "},
      {{"run", "transpose", "--param", "cols=99999999999999999999"}, 2, "'99999999999999999999' is beyond"},
      {{"run", "transpose", "--param", "depth=3"}, 2, "no parameter 'depth'"},
      {{"run", "transpose", "--size", "100000"}, 2, "--size 100000 is out of range for lab 'transpose'"},
      // run: measurement options
      {{"run", "transpose", "--repeat", "0"}, 2, "--repeat: 0 is out of range (allowed: 1 to 100000)"},
      {{"run", "transpose", "--repeat", "1e3"}, 2, "--repeat: '1e3' is not an integer"},
      {{"run", "transpose", "--repeat", "abc"}, 2, "--repeat: 'abc' is not an integer"},
      {{"run", "transpose", "--warmup", "-1"}, 2, "--warmup: -1 is out of range"},
      {{"run", "transpose", "--seed", "x"}, 2, "--seed: 'x' is not an integer"},
      {{"run", "transpose", "--format", "xml"}, 2, "'xml' is not one of"},
      {{"run", "transpose", "--metrics", "nonsense"}, 2, "unknown metric 'nonsense'"},
      {{"run", "transpose", "--metrics", ""}, 2, "--metrics: the value is empty"},
      {{"run", "transpose", "--replay-mode", "fast"}, 2, "'fast' is not one of {variant,kernel}"},
      {{"run", "transpose", "--cache-control", "some"}, 2, "'some' is not one of {all,none}"},
      {{"run", "transpose", "--replay-mode", "kernel", "--cache-control", "all"}, 2,
       "--cache-control all needs --replay-mode variant"},
      // run: outputs and options that do not apply
      {{"run", "transpose", "--json", "--all"}, 2, "'--all' is an option, not a value"},
      {{"run", "transpose", "--json", "--cold"}, 2, "'--cold' is an option"},
      {{"run", "transpose", "--json", ""}, 2, "--json: the value is empty"},
      {{"run", "transpose", "--json", "/nonexistent-folder/r.json"}, 2, "cannot write"},
      {{"run", "transpose", "--json-dir", "out"}, 2, "--json-dir does not apply"},
      {{"run", "transpose", "--threshold", "occupancy.achieved=0.4"}, 2,
       "--threshold does not apply (it shapes a diagnosis: add --diagnose)"},
      {{"run", "transpose", "-d", "--threshold", "occupancy.achieved=nan"}, 2,
       "'nan' is not a finite number"},
      {{"run", "transpose", "-d", "--threshold", "occupancy.achieved=2"}, 2,
       "--threshold occupancy.achieved: 2 is out of range (allowed: 0 to 1)"},
      {{"run", "transpose", "-d", "--threshold", "nosuch=1"}, 2, "unknown threshold 'nosuch'"},
      {{"run", "--all", "--size", "1024"}, 2, "run --all: --size does not apply"},
      {{"run", "--all", "--variant", "tiled"}, 2, "run --all: --variant does not apply"},
      {{"run", "--all", "--json", "all.json"}, 2, "run --all: --json does not apply"},
      {{"run", "transpose", "--all"}, 2, "give a lab or --all, not both"},
      {{"run", "transpose", "--max-noise", "1", "--repeat", "50"}, 2,
       "run: --repeat does not apply (adaptive timing decides how many launches to time"},
      {{"run", "transpose", "--min-time", "1"}, 2,
       "run: --min-time does not apply (it shapes adaptive timing: add --max-noise PCT)"},
      {{"run", "transpose", "--max-noise", "0"}, 2, "--max-noise"},
      {{"run", "transpose", "--max-noise", "1", "--min-samples", "1"}, 2, "--min-samples"},
      {{"diagnose", "--report", kTranspose, "--max-noise", "1"}, 2,
       "diagnose --report: --max-noise does not apply"},
      // sweep: refused before any GPU work
      {{"sweep"}, 2, "sweep needs a lab"},
      {{"sweep", "nosuchlab", "--axis", "size=1,2"}, 2, "unknown lab 'nosuchlab'"},
      {{"sweep", "transpose"}, 2, "sweep needs an axis: --axis NAME=VALUES"},
      {{"sweep", "transpose", "--axis", "depth=1,2"}, 2, "lab 'transpose' has no parameter 'depth'"},
      {{"sweep", "transpose", "--axis", "size=1Ki:1Mi:*2"}, 2, "65536 is out of range for lab 'transpose'"},
      {{"sweep", "matmul", "--axis", "k=4:16:*2"}, 2,
       "--axis k=4:16:*2: 4 is out of range for lab 'matmul' (k: allowed 8 to 16384)"},
      {{"sweep", "coalescing", "--axis", "stride=1:32:*2"}, 2,
       "coalescing: size x stride = 67108864 x 32 needs a 8.59 GB strided input"},
      {{"sweep", "transpose", "--axis", "size=1:64:+1", "--axis", "cols=1,2"}, 2,
       "the sweep has 128 points, more than 64 without --yes"},
      {{"sweep", "transpose", "--axis", "size=1024,2048", "--size", "4096"}, 2,
       "sweep: --size does not apply (--axis size sweeps it)"},
      {{"sweep", "transpose", "--axis", "cols=1024,2048", "--param", "cols=512"}, 2,
       "sweep: --param cols=512 does not apply (--axis cols=1024,2048 sweeps it)"},
      {{"sweep", "transpose", "--axis", "size=1024,2048", "--source"}, 2,
       "sweep: --source does not apply"},
      {{"sweep", "transpose", "--axis", "size=1024,2048", "--threshold", "occupancy.achieved=0.4"},
       2, "sweep: --threshold does not apply (it shapes a diagnosis: add --diagnose)"},
      {{"sweep", "transpose", "--axis", "size=1024,2048", "--repeat", "5", "--max-noise", "1"}, 2,
       "sweep: --repeat does not apply"},
      {{"sweep", "transpose", "--axis", "size=1024,2048", "--repeat", "5", "--timeout", "1"}, 2,
       "sweep: --timeout does not apply (it shapes adaptive timing"},
      {{"sweep", "transpose", "--axis", "size=1024,2048", "--variant", "bogus"}, 2,
       "no variant 'bogus'"},
      {{"sweep", "transpose", "--axis", "size=1024,2048", "--zip", "--axis", "cols=1,2,3"}, 2,
       "--zip pairs the axes' values one by one"},
      {{"sweep", "transpose", "--axis", "rows=1024,2048", "--param", "cols=0"}, 2,
       "--param cols=0 is out of range"},
      // diagnose
      {{"diagnose"}, 2, "diagnose needs a lab to run or --report FILE"},
      {{"diagnose", "transpose", "--report", kTranspose}, 2, "one of the two"},
      {{"diagnose", "--report", kTranspose, "--size", "4096", "--cold"}, 2,
       "diagnose --report: --size does not apply"},
      {{"diagnose", "--report", kTranspose, "--cold"}, 2, "--cold does not apply"},
      {{"diagnose", "--report", kTranspose, "--metrics", "full"}, 2, "--metrics does not apply"},
      {{"diagnose", "--report", kTranspose, "--json", "--cold"}, 2, "'--cold' is an option"},
      {{"diagnose", "--report", kTranspose, "--json", ""}, 2, "the value is empty"},
      {{"diagnose", "--report", kTranspose, "--variant", "bogus"}, 2, "has no variant 'bogus'"},
      {{"diagnose", "--report", kTranspose, "--variant", "tiled,bogus"}, 2, "has no variant 'bogus'"},
      {{"diagnose", "--report", kTranspose, "--kernel", "nosuch"}, 2, "has no kernel 'nosuch'"},
      {{"diagnose", "--report", kTranspose, "--variant", "tiled", "--kernel", "transpose_naive"}, 2,
       "variant 'tiled' has no kernel 'transpose_naive'"},
      {{"diagnose", "--report", kTranspose, "--threshold", "at_roof.roof_fraction=-0.1"}, 2,
       "-0.1 is out of range (allowed: 0 to 1)"},
      {{"diagnose", "--report", kTranspose, "--threshold", "local.fraction=inf"}, 2,
       "'inf' is not a finite number"},
      {{"diagnose", "--report", kTranspose, "--threshold", "occupancy.achieved=0x1p-1"}, 2,
       "--threshold occupancy.achieved: '0x1p-1' is not a decimal number"},
      {{"diagnose", "--report", kTranspose, "--threshold", "occupancy.achieved=infinity"}, 2,
       "'infinity' is not a finite number"},
      {{"diagnose", "--report", kTranspose, "--format", "html"}, 2, "'html' is not one of"},
      {{"diagnose", "--report", "/nonexistent-folder/r.json"}, 2, "cannot read"},
      {{"diagnose", "--report", kNotAReport}, 2, "README.md"},
      {{"diagnose", "--list-thresholds", "--report", kTranspose}, 2,
       "diagnose --list-thresholds: --report does not apply"},
      // compare
      {{"compare"}, 2, "reports"},
      {{"compare", kTranspose}, 2, "compare needs two or more reports"},
      {{"compare", kTranspose, kMatmul}, 2, "of lab 'transpose' and"},
      {{"compare", kTranspose, "--variants", "tiled"}, 2, "expected two names, A,B"},
      {{"compare", kTranspose, "--variants", "tiled,"}, 2, "an empty name in the list"},
      {{"compare", kTranspose, "--variants", "tiled,bogus"}, 2, "has no variant 'bogus'"},
      {{"compare", kTranspose, kTranspose, "--variants", "tiled,naive"}, 2, "give one file"},
      {{"compare", kTranspose, "--variants", "tiled,naive", "--fail-on-regression", "nan"}, 2,
       "--fail-on-regression: 'nan' is not a finite number"},
      {{"compare", kTranspose, "--variants", "tiled,naive", "--fail-on-regression", "-1"}, 2,
       "-1 is out of range"},
      {{"compare", kTranspose, "--variants", "tiled,naive", "--fail-on-regression", "abc"}, 2,
       "'abc' is not a number"},
      {{"compare", kTranspose, kTranspose, "--metrics", "bogus"}, 2, "unknown metric 'bogus'"},
      {{"compare", kTranspose, kTranspose, "--json", "--format"}, 2, "'--format' is an option"},
      {{"compare", kTranspose, kTranspose, "--format", "pdf"}, 2, "'pdf' is not one of"},
      {{"compare", kTranspose, kNotAReport}, 2, "README.md"},
      {{"compare", kTranspose, "--variants", "tiled,naive", "--fail-on-regression", "0x10"}, 2,
       "--fail-on-regression: '0x10' is not a decimal number"},
      {{"compare", kTranspose, "--variants", "tiled,naive", "--fail-on-regression", "inf"}, 2,
       "'inf' is not a finite number"},
      // report
      {{"report"}, 2, "reports is required"},
      {{"report", kTranspose}, 2, "report needs -o FILE.html, --trace FILE.json, or both"},
      {{"report", "/nonexistent-folder/r.json", "-o", "page.html"}, 2, "cannot read '/nonexistent-folder/r.json'"},
      {{"report", kNotAReport, "-o", "page.html"}, 2, "is not valid JSON"},
      {{"report", kTranspose, kNotAReport, "-o", "page.html"}, 2, "README.md"},
      {{"report", kTranspose, "-o", ""}, 2, "-o: the value is empty"},
      {{"report", kTranspose, "--html", ""}, 2, "--html: the value is empty"},
      {{"report", kTranspose, "-o"}, 2, "-o: 1 required FILE missing"},
      {{"report", kTranspose, "-o", "--trace"}, 2, "-o: '--trace' is an option, not a value"},
      {{"report", kTranspose, "-o", "/nonexistent-folder/page.html"}, 2, "cannot write"},
      {{"report", kTranspose, "--trace"}, 2, "--trace: 1 required FILE missing"},
      {{"report", kTranspose, "--trace", ""}, 2, "--trace: the value is empty"},
      {{"report", kTranspose, "--trace", "-o", "page.html"}, 2, "'-o' is an option"},
      {{"report", kTranspose, kMatmul, "--trace", "trace.json"}, 2, "--trace takes one report, or the reports of a job's ranks (2 given"},
      {{"report", kTranspose, "--trace", "trace.json"}, 2, "the 'transpose' report has no timeline"},
      {{"report", kTranspose, "--format", "json", "-o", "page.html"}, 2, "--format"},
      // export: every report read before the database is made
      {{"export", kTranspose}, 2, "--sqlite is required"},
      {{"export", "--sqlite", "runs.db"}, 2, "reports is required"},
      {{"export", "--sqlite", "", kTranspose}, 2, "--sqlite: the value is empty"},
      {{"export", "--sqlite", "runs.db", kTranspose, kNotAReport}, 2, "is not valid JSON"},
      // profile: refused before the program starts (`true` never runs)
      {{"profile"}, 2, "profile needs a program: gpulab profile [OPTIONS] -- APP [ARGS...]"},
      {{"profile", "--diagnose", "--"}, 2, "profile needs a program"},
      {{"profile", "--launch-count", "-1", "--", "true"}, 2, "--launch-count -1 is not a count (1 or more, or all)"},
      {{"profile", "--launch-count", "0", "--", "true"}, 2, "--launch-count 0 is not a count"},
      {{"profile", "--launch-count", "1e3", "--", "true"}, 2, "--launch-count: '1e3' is not an integer"},
      {{"profile", "-c", "", "--", "true"}, 2, "-c: the value is empty"},
      {{"profile", "--launch-skip", "-1", "--", "true"}, 2, "--launch-skip: -1 is out of range"},
      {{"profile", "--kernel", "(", "--", "true"}, 2, "--kernel '(' is not a regular expression"},
      {{"profile", "--kernel", "", "--", "true"}, 2, "--kernel: the value is empty"},
      {{"profile", "--metrics", "nosuch", "--", "true"}, 2, "--metrics: unknown metric 'nosuch'"},
      {{"profile", "--metrics", "basic,", "--", "true"}, 2, "an empty name in the list"},
      {{"profile", "--replay", "bogus", "--", "true"}, 2, "--replay: 'bogus' is not one of {kernel,batch,none}"},
      {{"profile", "--replay", "none", "--metrics", "full", "--", "true"}, 2, "--replay none collects no counters"},
      {{"profile", "--trace", "--metrics", "full", "--", "true"}, 2, "--trace and --metrics"},
      {{"profile", "--trace", "--source", "--", "true"}, 2, "--trace and --source: a traced run profiles no launch"},
      {{"profile", "--source", "--replay", "kernel", "--", "true"}, 2, "--source replays each profiled function's first launch from its saved memory, as batch replay does: drop --replay kernel"},
      {{"profile", "--source", "--replay", "none", "--", "true"}, 2, "drop --replay none"},
      {{"profile", "--kernel-timeout", "-1", "--", "true"}, 2, "--kernel-timeout: -1 is out of range"},
      {{"profile", "--kernel-timeout", "0x10", "--", "true"}, 2, "--kernel-timeout: '0x10' is not a decimal number"},
      {{"profile", "--kernel-timeout", "nan", "--", "true"}, 2, "'nan' is not a finite number"},
      {{"profile", "--threshold", "occupancy.achieved=0.4", "--", "true"}, 2, "--threshold shapes a diagnosis: add --diagnose"},
      {{"profile", "--all-findings", "--", "true"}, 2, "--all-findings shapes a diagnosis: add --diagnose"},
      {{"profile", "-d", "--threshold", "nosuch=1", "--", "true"}, 2, "unknown threshold 'nosuch'"},
      {{"profile", "-d", "--threshold", "occupancy.achieved=0x1p-1", "--", "true"}, 2, "'0x1p-1' is not a decimal number"},
      {{"profile", "--json", "--diagnose", "--", "true"}, 2, "--json: '--diagnose' is an option, not a value"},
      {{"profile", "--json", "", "--", "true"}, 2, "--json: the value is empty"},
      {{"profile", "--json", "/nonexistent-folder/p.json", "--", "true"}, 2, "cannot write"},
      {{"profile", "--format", "html", "--", "true"}, 2, "'html' is not one of"},
      // selftest
      {{"selftest", "--labs", ""}, 2, "--labs: the value is empty"},
      {{"selftest", "--labs", "transpose,"}, 2, "an empty name in the list"},
      {{"selftest", "--labs", "nosuch"}, 2, "unknown lab 'nosuch'"},
      {{"selftest", "--repeat", "0"}, 2, "--repeat: 0 is out of range (allowed: 1 to 1000)"},
      {{"selftest", "--repeat", "1e3"}, 2, "'1e3' is not an integer"},
      // help, commands
      {{"help", "nosuch"}, 2, "help: unknown command 'nosuch'"},
      {{"help", "run", "list"}, 2, "help takes at most one command"},
      {{"frobnicate"}, 2, "frobnicate"},
      {{"--frobnicate"}, 2, "--frobnicate"},
      {{"shell", "extra"}, 2, "extra"},
  };
  // clang-format on
  return all;
}

class BadInput : public ::testing::TestWithParam<Case> {};

TEST_P(BadInput, OneLineDocumentedCodeNoFileLeft) {
  const Case& c = GetParam();
  char tmpl[] = "/tmp/gpulab-bad-input-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;

  const Outcome o = run_gpulab(c.args, dir);
  EXPECT_EQ(o.code, c.code) << c << "\n" << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << c << ": one line\n" << o.err;
  EXPECT_EQ(o.err.rfind("gpulab: error: ", 0), 0u) << c << "\n" << o.err;
  EXPECT_NE(o.err.find(c.fragment), std::string::npos) << c << "\nwants: " << c.fragment << "\n" << o.err;
  EXPECT_EQ(o.out, "") << c;
  const auto left = entries(dir);
  EXPECT_TRUE(left.empty()) << c << " left " << left.front();

  for (const auto& name : left) ::unlink((dir + "/" + name).c_str());
  ::rmdir(dir.c_str());
}

INSTANTIATE_TEST_SUITE_P(EveryCommand, BadInput, ::testing::ValuesIn(cases()));

TEST(BadInput, AtLeastFiftyCases) { EXPECT_GE(cases().size(), 50u); }

}  // namespace
