// The folders depend on each other in one direction: app -> labs, app -> cupti, and all three
// -> reports, never back. reports/ is plain host code that the GPU-less CI machine tests; a
// backward include would drag CUDA or CUPTI into it, or tie cupti/ to the labs. And only
// cupti/ sees CUPTI's headers.
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reports/input_file.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;

// The project folders each folder may include from (its own among them).
const std::map<std::string, std::set<std::string>>& allowed() {
  static const std::map<std::string, std::set<std::string>> a = {
      {"app", {"app", "labs", "cupti", "reports"}},
      {"labs", {"labs", "reports"}},
      {"cupti", {"cupti", "reports"}},
      {"reports", {"reports"}},
  };
  return a;
}

// The #include lines of `text` (a file of `folder`) that name a project folder `folder` may
// not include, as "line N: #include ...".
std::vector<std::string> backward_includes(const std::string& folder, const std::string& text) {
  static const std::regex include(R"(^\s*#\s*include\s*"([a-z_]+)/[^"]*")");
  std::vector<std::string> out;
  std::istringstream lines(text);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    std::smatch m;
    if (!std::regex_search(line, m, include)) continue;
    const std::string target = m[1];
    if (allowed().count(target) && !allowed().at(folder).count(target))
      out.push_back("line " + std::to_string(n) + ": " + line);
  }
  return out;
}

// System headers a folder may not include: reports/ is plain host code (no CUDA, CUPTI or
// CUDA libraries), and cupti/ is the only folder that sees CUPTI.
std::vector<std::string> foreign_headers(const std::string& folder, const std::string& text) {
  static const std::regex cuda(R"(^\s*#\s*include\s*<(cuda|cupti|cublas|cub/|nvtx|nvPerf))");
  static const std::regex cupti(R"(^\s*#\s*include\s*<(cupti|nvPerf))");
  if (folder == "cupti") return {};
  const std::regex& rule = folder == "reports" ? cuda : cupti;
  std::vector<std::string> out;
  std::istringstream lines(text);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n)
    if (std::regex_search(line, rule)) out.push_back("line " + std::to_string(n) + ": " + line);
  return out;
}

TEST(Layering, BackwardIncludesAreFound) {
  EXPECT_TRUE(backward_includes("reports", "#include \"reports/report.hpp\"\n").empty());
  EXPECT_TRUE(backward_includes("app", "#include \"cupti/range_profiler.hpp\"\n").empty());
  EXPECT_EQ(backward_includes("reports", "#include <map>\n#include \"cupti/x.hpp\"\n"),
            std::vector<std::string>{"line 2: #include \"cupti/x.hpp\""});
  EXPECT_EQ(backward_includes("cupti", "  #  include \"labs/lab.hpp\"").size(), 1u);
  EXPECT_EQ(backward_includes("labs", "#include \"app/session.hpp\"").size(), 1u);
  EXPECT_EQ(backward_includes("labs", "#include \"cupti/range_profiler.hpp\"").size(), 1u);
  EXPECT_EQ(foreign_headers("reports", "#include <cuda_runtime_api.h>").size(), 1u);
  EXPECT_EQ(foreign_headers("app", "#include <cupti_activity.h>").size(), 1u);
  EXPECT_TRUE(foreign_headers("app", "#include <cuda_runtime_api.h>").empty());
  EXPECT_TRUE(foreign_headers("cupti", "#include <cupti_activity.h>").empty());
}

TEST(Layering, EveryIncludePointsDownTheFolderOrder) {
  const fs::path root = GPULAB_SOURCE_DIR;
  const std::set<std::string> sources = {".cpp", ".hpp", ".cu", ".cuh", ".in"};
  int files = 0;
  for (const auto& [folder, unused] : allowed()) {
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      if (!entry.is_regular_file() || !sources.count(entry.path().extension().string())) continue;
      ++files;
      const std::string text = read_file(entry.path().string());
      for (const auto& bad : backward_includes(folder, text))
        ADD_FAILURE() << fs::relative(entry.path(), root).string() << " " << bad;
      for (const auto& bad : foreign_headers(folder, text))
        ADD_FAILURE() << fs::relative(entry.path(), root).string() << " " << bad;
    }
  }
  EXPECT_GT(files, 50) << "the scan found the sources";
}

}  // namespace
}  // namespace gpulab
