// Completion offers what the commands accept, from the same definitions they check with.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "app/cli.hpp"
#include "unit/run_cli.hpp"

namespace gpulab::app {
namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(Completion, FormatsAreTheOnesEachCommandAccepts) {
  EXPECT_EQ(complete({"list", "--format"}, "", false),
            (std::vector<std::string>{"csv", "json", "markdown", "text"}));
  EXPECT_EQ(complete({"info", "--format"}, "", false), (std::vector<std::string>{"json", "text"}));
  EXPECT_TRUE(has(complete({"run", "transpose", "-f"}, "", false), "markdown"));
  // Every offered format is accepted by the command.
  for (const auto& f : complete({"list", "--format"}, "", false))
    EXPECT_EQ(test::run_cli({"list", "--format", f}).code, 0) << f;
  EXPECT_EQ(complete({"run", "transpose", "--replay-mode"}, "", false),
            (std::vector<std::string>{"kernel", "variant"}));
}

TEST(Completion, ThresholdsAndParametersByName) {
  const auto thresholds = complete({"diagnose", "--report", "r.json", "--threshold"}, "occ", false);
  EXPECT_EQ(thresholds, (std::vector<std::string>{"occupancy.achieved="}));
  EXPECT_EQ(complete({"run", "transpose", "--param"}, "", false),
            (std::vector<std::string>{"cols=", "rows="}));
  EXPECT_EQ(complete({"selftest", "--labs"}, "trans", false), (std::vector<std::string>{"transpose"}));
}

// After '=' of an option, after a comma in a list, and after `help`.
TEST(Completion, AfterAnEqualsSignACommaAndHelp) {
  EXPECT_EQ(complete({"run", "transpose"}, "--variant=p", false),
            (std::vector<std::string>{"--variant=padded"}));
  EXPECT_EQ(complete({"run", "transpose", "--variant"}, "tiled,pa", false),
            (std::vector<std::string>{"tiled,padded"}));
  const auto rest = complete({"run", "transpose", "--variant"}, "tiled,", false);
  EXPECT_FALSE(has(rest, "tiled,tiled")) << "an item is not offered twice";
  EXPECT_TRUE(has(rest, "tiled,naive"));
  EXPECT_EQ(complete({"selftest"}, "--labs=transpose,sp", false),
            (std::vector<std::string>{"--labs=transpose,spill"}));
  EXPECT_EQ(complete({"help"}, "ru", false), (std::vector<std::string>{"run"}));
  // A flag takes no value: the lab after it is still the lab.
  EXPECT_EQ(complete({"run", "--all-findings"}, "transp", false),
            (std::vector<std::string>{"transpose"}));
  EXPECT_TRUE(
      has(complete({"run", "--all-findings", "transpose", "--variant"}, "", false), "padded"));
  EXPECT_TRUE(complete({"run", "transpose", "--format"}, "text,", false).empty())
      << "--format takes one value";
}

TEST(Completion, CompareMetricsAreMetricNamesNotSets) {
  const auto metrics = complete({"compare", "a.json", "b.json", "--metrics"}, "", false);
  EXPECT_FALSE(has(metrics, "basic"));
  EXPECT_TRUE(has(metrics, "shld_wavefronts_per_inst"));
}

TEST(Completion, FileAndNumberValuesOfferNothing) {
  EXPECT_TRUE(complete({"run", "transpose", "--json"}, "", false).empty());
  EXPECT_TRUE(complete({"run", "transpose", "--repeat"}, "", false).empty());
}

// Files where a file name belongs, and only there: no candidate is not a reason to offer files.
TEST(Completion, PathsOnlyWhereAFileBelongs) {
  for (const std::vector<std::string>& file : std::vector<std::vector<std::string>>{
           {"run", "transpose", "--json"},
           {"diagnose", "--report"},
           {"compare", "a.json", "--html"},
           {"compare"},
           {"compare", "a.json"},
           {"report", "a.json", "-o"},
           {"report", "a.json", "--trace"},
           {"report"},
           {"profile", "--json"},
           {"profile", "--"},
           {"profile", "--", "./app", "--size"},
       })
    EXPECT_EQ(path_expected(file, "", false), PathKind::file) << ::testing::PrintToString(file);
  EXPECT_EQ(path_expected({"run", "--all", "--json-dir"}, "", false), PathKind::folder);
  for (const std::vector<std::string>& other : std::vector<std::vector<std::string>>{
           {},
           {"diagnose", "--report", "r.json", "--threshold"},
           {"run", "transpose", "--size"},
           {"run", "transpose", "--repeat"},
           {"run", "transpose", "--variant"},
           {"run"},
           {"profile", "--launch-count"},
           {"compare", "a.json", "--fail-on-regression"},
       })
    EXPECT_EQ(path_expected(other, "", false), PathKind::none) << ::testing::PrintToString(other);
  EXPECT_EQ(path_expected({"compare", "a.json"}, "--", false), PathKind::none) << "an option";
  EXPECT_EQ(path_expected({"save"}, "", true), PathKind::file);
  EXPECT_EQ(path_expected({"set", "output"}, "", true), PathKind::folder);
  EXPECT_EQ(path_expected({"set", "size"}, "", true), PathKind::none);
  // After `--` the words are the program's: none of gpulab's options.
  EXPECT_TRUE(complete({"profile", "--", "./app"}, "--", false).empty());
}

TEST(Completion, CompletePrintsAMarkerWhereAFileBelongsAndNothingForNoMatch) {
  EXPECT_EQ(test::run_cli({"complete", "--", "diagnose", "--threshold", "zz"}).out, "");
  EXPECT_EQ(test::run_cli({"complete", "--", "run", "transpose", "--size", ""}).out, "");
  EXPECT_EQ(test::run_cli({"complete", "--", "run", "transpose", "--repeat", "1"}).out, "");
  EXPECT_EQ(test::run_cli({"complete", "--", "run", "transpose", "--json", ""}).out,
            std::string(kCompleteFiles) + "\n");
  EXPECT_EQ(test::run_cli({"complete", "--", "compare", "a.json", "b"}).out,
            std::string(kCompleteFiles) + "\n");
  EXPECT_EQ(test::run_cli({"complete", "--", "run", "--all", "--json-dir", "o"}).out,
            std::string(kCompleteFolders) + "\n");
  EXPECT_EQ(test::run_cli({"complete", "--", "diagnose", "--threshold", "occ"}).out,
            "occupancy.achieved=\n");
}

// The bash script itself, sourced in bash with a stand-in for the programmable completion
// builtin's call: COMPREPLY for a word being typed, in a folder that holds one file.
std::string bash_reply(const std::string& words) {
  const std::string dir = ::testing::TempDir() + "/gpulab_completion_" + std::to_string(::getpid());
  const std::string script = std::string(GPULAB_SOURCE_DIR) + "/scripts/completions/gpulab.bash";
  // In bash: source the script, set the words as the completion builtin would, call it.
  const std::string in_bash = "source " + script + "; COMP_WORDS=(" + GPULAB_BINARY + " " + words +
                              "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _gpulab; " +
                              R"(printf "[%s]" "${COMPREPLY[@]}")";
  const std::string command = "mkdir -p " + dir + " && cd " + dir + " && touch zz_report.json && " +
                              "bash --norc -c '" + in_bash + "' 2>&1; rm -rf " + dir;
  std::string out;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
    ::pclose(pipe);
  }
  return out;
}

TEST(Completion, BashScriptOffersFilesOnlyWhereAFileBelongs) {
  if (std::system("command -v bash >/dev/null 2>&1") != 0) GTEST_SKIP() << "needs bash";
  EXPECT_EQ(bash_reply("diagnose --threshold zz"), "[]") << "no threshold starts with zz";
  EXPECT_EQ(bash_reply("run transpose --size zz"), "[]") << "a number";
  EXPECT_EQ(bash_reply("run transpose --repeat \"\""), "[]") << "a number";
  EXPECT_EQ(bash_reply("diagnose --report zz"), "[zz_report.json]");
  EXPECT_EQ(bash_reply("compare a.json zz"), "[zz_report.json]");
  EXPECT_EQ(bash_reply("diagnose --threshold occ"), "[occupancy.achieved=]");
  // bash splits at '=': the value after it completes, and only that part is replaced.
  EXPECT_EQ(bash_reply("run transpose --variant = pad"), "[padded]");
  EXPECT_EQ(bash_reply("run transpose --variant ="),
            "[all][naive][padded][swizzled][tiled][vectorized]");
  EXPECT_EQ(bash_reply("run transpose --variant tiled,pad"), "[tiled,padded]");
  EXPECT_EQ(bash_reply("run transpose --json = zz"), "[zz_report.json]");
  EXPECT_EQ(bash_reply("help ru"), "[run]");
}

}  // namespace
}  // namespace gpulab::app
