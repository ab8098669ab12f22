// The command line, in process (dispatch) and as the real binary: parsing, help, exit codes,
// and one-line errors for bad input. None of this needs a GPU.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app/cli.hpp"
#include "unit/run_cli.hpp"
#include "unit/temp_folder.hpp"

namespace gpulab::app {
namespace {

using test::run_cli;

bool gpu_present() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

// A usage error: exit 2, one line on stderr that contains `fragment`, nothing on stdout.
void expect_usage_error(const std::vector<std::string>& args, const std::string& fragment) {
  const auto r = run_cli(args);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
  EXPECT_EQ(r.err.rfind("gpulab: error: ", 0), 0u) << r.err;
}

TEST(Cli, VersionAndHelp) {
  auto r = run_cli({"--version"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.rfind("gpulab ", 0), 0u) << r.out;
  r = run_cli({"--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* cmd : {"list", "info", "run"}) EXPECT_NE(r.out.find(cmd), std::string::npos);
  r = run_cli({"run", "--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* opt : {"--variant", "--size", "--repeat", "--metrics", "--json", "--format"})
    EXPECT_NE(r.out.find(opt), std::string::npos) << opt;
  r = run_cli({});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("Usage"), std::string::npos) << r.out;
}

TEST(Cli, ListText) {
  const auto r = run_cli({"list"});
  EXPECT_EQ(r.code, 0) << r.err;
  for (const char* s : {"transpose", "naive", "baseline", "tiled", "padded", "swizzled"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

TEST(Cli, ListJsonIsValidAndComplete) {
  const auto r = run_cli({"list", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto labs = nlohmann::json::parse(r.out);
  ASSERT_TRUE(labs.is_array());
  const auto it = std::find_if(labs.begin(), labs.end(),
                               [](const auto& l) { return l.at("name") == "transpose"; });
  ASSERT_NE(it, labs.end());
  EXPECT_EQ((*it)["variants"][0]["role"], "baseline");
  EXPECT_EQ((*it)["variants"][0]["expected_finding"], "uncoalesced-global");
  EXPECT_EQ((*it)["variants"].size(), 5u);
}

TEST(Cli, ListMetrics) {
  auto r = run_cli({"list", "--metrics"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("dram__bytes_read.sum"), std::string::npos);
  EXPECT_NE(r.out.find("shld_wavefronts_per_inst"), std::string::npos);
  r = run_cli({"list", "--metrics", "--format", "json"});
  EXPECT_EQ(r.code, 0);
  EXPECT_FALSE(nlohmann::json::parse(r.out).at("metrics").empty());
}

TEST(Cli, BadInputIsAOneLineUsageError) {
  expect_usage_error({"run", "nosuchlab"}, "unknown lab 'nosuchlab'");
  expect_usage_error({"run", "transpose", "--variant", "bogus"}, "no variant 'bogus'");
  expect_usage_error({"run", "transpose", "--size", "0"}, "out of range");
  expect_usage_error({"run", "transpose", "--size", "-5"}, "out of range");
  expect_usage_error({"run", "transpose", "--size", "99999999999"}, "out of range");
  expect_usage_error({"run", "transpose", "--size", "abc"}, "size");
  expect_usage_error({"run", "transpose", "--param", "cols"}, "NAME=VALUE");
  expect_usage_error({"run", "transpose", "--param", "cols=x"}, "not an integer");
  expect_usage_error({"run", "transpose", "--param", "depth=3"}, "no parameter 'depth'");
  expect_usage_error({"run", "transpose", "--repeat", "0"}, "repeat");
  expect_usage_error({"run", "transpose", "--format", "xml"}, "format");
  expect_usage_error({"run", "transpose", "--metrics", "nonsense"}, "unknown metric");
  // Every list option reads its list one way (reports/base/user_input.hpp), --metrics too.
  expect_usage_error({"run", "transpose", "--variant", "tiled,tiled"}, "names 'tiled' twice");
  expect_usage_error({"run", "transpose", "--metrics", "dram_read,,dram_write"},
                     "--metrics: 'dram_read,,dram_write' has an empty name in the list");
  expect_usage_error({"run", "transpose", "--metrics", "dram_read,dram_read"},
                     "--metrics: 'dram_read,dram_read' names 'dram_read' twice");
  expect_usage_error({"info", "--check-metrics", "dram_read,"}, "--check-metrics: 'dram_read,'");
  expect_usage_error({"selftest", "--labs", "transpose,transpose"}, "names 'transpose' twice");
  expect_usage_error({"run"}, "lab");
  expect_usage_error({"frobnicate"}, "frobnicate");
}

TEST(Cli, UnwritableJsonPathFailsBeforeAnyWork) {
  const std::string path = "/nonexistent-folder/report.json";
  expect_usage_error({"run", "transpose", "--json", path}, "cannot write");
  std::ifstream in(path);
  EXPECT_FALSE(in.good());
}

TEST(Cli, RunWithoutGpuExits3WithOneLine) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present: this test is for GPU-less machines";
  for (const std::vector<std::string> args :
       {std::vector<std::string>{"run", "transpose"}, std::vector<std::string>{"info"}}) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find("no usable GPU"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

const std::string kLabFixture = std::string(GPULAB_FIXTURES_DIR) + "/labs/transpose.json";

std::vector<std::string> variant_names(const nlohmann::json& report) {
  std::vector<std::string> names;
  for (const auto& v : report.at("variants")) names.push_back(v.at("name"));
  return names;
}

TEST(Cli, DiagnoseHonoursTheSelectionInEveryFormat) {
  const std::vector<std::string> base{"diagnose", "--report", kLabFixture};
  auto with = [&](std::vector<std::string> more) {
    auto args = base;
    args.insert(args.end(), more.begin(), more.end());
    return run_cli(args);
  };
  auto r = with({"--variant", "tiled", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(variant_names(nlohmann::json::parse(r.out)), (std::vector<std::string>{"tiled"}));
  r = with({"--variant", "tiled,padded", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(variant_names(nlohmann::json::parse(r.out)), (std::vector<std::string>{"tiled", "padded"}));
  r = with({"--kernel", "transpose_padded", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(variant_names(nlohmann::json::parse(r.out)), (std::vector<std::string>{"padded"}));
  r = with({"--variant", "tiled", "--format", "csv"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("naive"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tiled"), std::string::npos) << r.out;
  r = with({"--variant", "tiled,padded"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("transpose/padded"), std::string::npos);
  EXPECT_EQ(r.out.find("transpose/naive"), std::string::npos);
}

TEST(Cli, HelpCommandIsHelp) {
  const auto help = run_cli({"help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_EQ(help.out, run_cli({"--help"}).out);
  const auto run_help = run_cli({"help", "run"});
  EXPECT_EQ(run_help.code, 0);
  EXPECT_EQ(run_help.out, run_cli({"run", "--help"}).out);
  expect_usage_error({"help", "nosuch"}, "unknown command 'nosuch'");
}

TEST(Cli, AValueNeverSwallowsAnOption) {
  expect_usage_error({"diagnose", "--report", kLabFixture, "--json", "--format", "json"},
                     "'--format' is an option");
  // --opt=VALUE and negative numbers are values.
  auto r = run_cli({"diagnose", "--report", kLabFixture, "--variant=tiled", "--format=json"});
  EXPECT_EQ(r.code, 0) << r.err;
  expect_usage_error({"run", "transpose", "--warmup", "-3"}, "-3 is out of range");
}

using TempDir = test::TempFolder;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Cli, JsonFileIsOneGrammarOnEveryCommand) {
  TempDir dir;
  const auto r = run_cli({"list", "--json", dir.path + "/labs.json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(slurp(dir.path + "/labs.json")).is_array());
  EXPECT_NE(r.out.find("transpose"), std::string::npos) << "text on stdout, as run --json does";
  const auto c = run_cli({"compare", kLabFixture, "--variants", "naive,padded", "--json",
                          dir.path + "/c.json"});
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_TRUE(nlohmann::json::accept(slurp(dir.path + "/c.json")));
}

TEST(Cli, JsonWritesThroughASymbolicLink) {
  TempDir dir;
  const std::string target = dir.path + "/target.json", link = dir.path + "/link.json";
  ASSERT_EQ(::symlink("target.json", link.c_str()), 0);  // relative, and dangling at first
  auto r = run_cli({"diagnose", "--report", kLabFixture, "--variant", "tiled", "--json", link});
  ASSERT_EQ(r.code, 0) << r.err;
  char buf[256] = {};
  ASSERT_GT(::readlink(link.c_str(), buf, sizeof buf - 1), 0) << "the link is still a link";
  EXPECT_EQ(std::string(buf), "target.json");
  EXPECT_EQ(variant_names(nlohmann::json::parse(slurp(target))), (std::vector<std::string>{"tiled"}));
}

TEST(Cli, CompareGatesFailClosed) {
  const std::string h200 = std::string(GPULAB_FIXTURES_DIR) + "/transpose_h200.json";
  // tiled → naive: B is slower, a regression at any limit.
  auto r = run_cli({"compare", h200, "--variants", "tiled,naive", "--fail-on-regression", "0"});
  EXPECT_EQ(r.code, 5) << r.err;
  expect_usage_error({"compare", h200, "--variants", "tiled,naive", "--fail-on-regression", "nan"},
                     "not a finite number");
  expect_usage_error({"compare", h200, std::string(GPULAB_FIXTURES_DIR) + "/labs/matmul.json"},
                     "compare reports of one lab");
}

TEST(Cli, SelftestWithAnEmptyLabListFails) {
  expect_usage_error({"selftest", "--labs", ""}, "empty");
  expect_usage_error({"selftest", "--labs", ","}, "empty name");
}

// The real executable: main's plumbing and exit codes.
int run_binary(const std::string& args, std::string& output) {
  const std::string cmd = std::string(GPULAB_BINARY) + " " + args + " 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return -1;
  std::array<char, 4096> buf{};
  output.clear();
  while (std::fgets(buf.data(), buf.size(), pipe)) output += buf.data();
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Binary, ListAndExitCodes) {
  std::string out;
  EXPECT_EQ(run_binary("list", out), 0) << out;
  EXPECT_NE(out.find("transpose"), std::string::npos);
  EXPECT_EQ(run_binary("run transpose --size 0", out), 2) << out;
  if (!gpu_present()) {
    EXPECT_EQ(run_binary("run transpose", out), 3) << out;
    EXPECT_NE(out.find("no usable GPU"), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace gpulab::app
