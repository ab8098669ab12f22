// The folders depend on each other in one direction: app -> labs, app -> cupti, and all three
// -> reports, never back; inject/ (the library `gpulab profile` loads into programs) -> cupti
// and reports, and nothing includes it; under them all reports/base/, what every folder uses.
// reports/ is plain host code that the GPU-less CI machine tests; a backward include would drag
// CUDA or CUPTI into it, or tie cupti/ to the labs. And only cupti/ and inject/ see CUPTI's
// headers. Layering.FolderGraph prints the folders, their lines and the arrows between them.
#include <filesystem>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "reports/base/input_file.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;

// The project folders, top of the order first, and those each may include from (its own among
// them). A file belongs to the deepest folder listed that holds it.
const std::vector<std::pair<std::string, std::set<std::string>>>& order() {
  static const std::vector<std::pair<std::string, std::set<std::string>>> o = {
      {"app",
       {"app", "labs", "labs/harness", "cupti", "reports/render", "reports/diagnosis",
        "reports/source", "reports", "reports/base"}},
      {"inject", {"inject", "cupti", "reports", "reports/base"}},
      {"labs", {"labs", "labs/harness", "reports", "reports/base"}},
      {"labs/harness", {"labs/harness", "reports", "reports/base"}},
      {"cupti", {"cupti", "reports/source", "reports", "reports/base"}},
      {"reports/render",
       {"reports/render", "reports/diagnosis", "reports/source", "reports", "reports/base"}},
      {"reports/diagnosis", {"reports/diagnosis", "reports/source", "reports", "reports/base"}},
      {"reports/source", {"reports/source", "reports", "reports/base"}},
      {"reports", {"reports", "reports/base"}},
      {"reports/base", {"reports/base"}},
  };
  return o;
}

const std::set<std::string>& allowed(const std::string& folder) {
  for (const auto& [name, may] : order())
    if (name == folder) return may;
  static const std::set<std::string> none;
  return none;
}

// The project folder of a path relative to the source tree ("reports/base/errors.hpp" ->
// "reports/base"); empty for a path in none.
std::string folder_of(const std::string& path) {
  std::string best;
  for (const auto& [name, unused] : order())
    if (path.rfind(name + "/", 0) == 0 && name.size() > best.size()) best = name;
  return best;
}

// An #include of a project header; its first group is the header's path.
const std::regex& project_include() {
  static const std::regex include(R"re(^\s*#\s*include\s*"([a-z_/]+/[^"/]*)")re");
  return include;
}

// The #include lines of `text` (a file of `folder`) that name a project folder `folder` may
// not include, as "line N: #include ...".
std::vector<std::string> backward_includes(const std::string& folder, const std::string& text) {
  std::vector<std::string> out;
  std::istringstream lines(text);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    std::smatch m;
    if (!std::regex_search(line, m, project_include())) continue;
    const std::string target = folder_of(m[1]);
    if (!target.empty() && !allowed(folder).count(target))
      out.push_back("line " + std::to_string(n) + ": " + line);
  }
  return out;
}

// System headers a folder may not include: reports/ is plain host code (no CUDA, CUPTI or
// CUDA libraries), and cupti/ and inject/ are the only folders that see CUPTI.
std::vector<std::string> foreign_headers(const std::string& folder, const std::string& text) {
  static const std::regex cuda(R"(^\s*#\s*include\s*<(cuda|cupti|cublas|cub/|nvtx|nvPerf))");
  static const std::regex cupti(R"(^\s*#\s*include\s*<(cupti|nvPerf))");
  if (folder == "cupti" || folder == "inject") return {};
  const std::regex& rule = folder.rfind("reports", 0) == 0 ? cuda : cupti;
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
  EXPECT_EQ(backward_includes("cupti", "  #  include \"labs/harness/lab.hpp\"").size(), 1u);
  EXPECT_EQ(backward_includes("labs", "#include \"app/session.hpp\"").size(), 1u);
  EXPECT_EQ(backward_includes("labs", "#include \"cupti/range_profiler.hpp\"").size(), 1u);
  EXPECT_EQ(backward_includes("app", "#include \"inject/record_file.hpp\"").size(), 1u);
  EXPECT_TRUE(backward_includes("inject", "#include \"cupti/range_profiler.hpp\"").empty());
  EXPECT_EQ(foreign_headers("reports", "#include <cuda_runtime_api.h>").size(), 1u);
  EXPECT_EQ(foreign_headers("app", "#include <cupti_activity.h>").size(), 1u);
  EXPECT_TRUE(foreign_headers("app", "#include <cuda_runtime_api.h>").empty());
  EXPECT_TRUE(foreign_headers("cupti", "#include <cupti_activity.h>").empty());
  EXPECT_EQ(foreign_headers("reports/base", "#include <cuda.h>").size(), 1u);
  // reports/base/ is under reports/: it includes nothing above it.
  EXPECT_TRUE(backward_includes("reports", "#include \"reports/base/errors.hpp\"").empty());
  EXPECT_EQ(backward_includes("reports/base", "#include \"reports/report.hpp\"").size(), 1u);
  EXPECT_EQ(folder_of("reports/base/errors.hpp"), "reports/base");
  EXPECT_EQ(folder_of("reports/units.hpp"), "reports");
  // The renderers sit above the model: they read it, it never reads them.
  EXPECT_TRUE(backward_includes("reports/render", "#include \"reports/report.hpp\"").empty());
  EXPECT_EQ(backward_includes("reports", "#include \"reports/render/style.hpp\"").size(), 1u);
  EXPECT_EQ(backward_includes("labs", "#include \"reports/render/table.hpp\"").size(), 1u);
  // The labs stand on their harness, which knows none of them.
  EXPECT_TRUE(backward_includes("labs", "#include \"labs/harness/lab.hpp\"").empty());
  EXPECT_EQ(backward_includes("labs/harness", "#include \"labs/matmul_tiles.hpp\"").size(), 1u);
  EXPECT_EQ(folder_of("labs/harness/harness.cu"), "labs/harness");
  EXPECT_EQ(folder_of("reports/render/escape.hpp"), "reports/render");
  // The diagnosis reads the model and the renderers show it; the model knows neither.
  EXPECT_TRUE(
      backward_includes("reports/render", "#include \"reports/diagnosis/diagnosis.hpp\"").empty());
  EXPECT_EQ(backward_includes("reports/diagnosis", "#include \"reports/render/table.hpp\"").size(),
            1u);
  EXPECT_EQ(backward_includes("reports", "#include \"reports/diagnosis/limits.hpp\"").size(), 1u);
  EXPECT_EQ(backward_includes("cupti", "#include \"reports/diagnosis/limits.hpp\"").size(), 1u);
  EXPECT_EQ(folder_of("tests/unit/x.cpp"), "");
}

struct Source {
  std::string folder;  // a folder of order()
  std::string file;    // relative to the source tree, e.g. reports/units.hpp
  std::string text;
};

// Every C++ and CUDA source of the project folders.
const std::vector<Source>& project_sources() {
  static const std::vector<Source> all = [] {
    const fs::path root = GPULAB_SOURCE_DIR;
    const std::set<std::string> extensions = {".cpp", ".hpp", ".cu", ".cuh", ".in"};
    std::vector<Source> out;
    for (const auto& [top, unused] : order()) {
      if (top.find('/') != std::string::npos) continue;  // walked from its top folder
      for (const auto& entry : fs::recursive_directory_iterator(root / top))
        if (entry.is_regular_file() && extensions.count(entry.path().extension().string())) {
          const std::string file = fs::relative(entry.path(), root).string();
          out.push_back({folder_of(file), file, read_file(entry.path().string())});
        }
    }
    return out;
  }();
  return all;
}

TEST(Layering, EveryIncludePointsDownTheFolderOrder) {
  for (const auto& s : project_sources()) {
    for (const auto& bad : backward_includes(s.folder, s.text))
      ADD_FAILURE() << s.file << " " << bad;
    for (const auto& bad : foreign_headers(s.folder, s.text)) ADD_FAILURE() << s.file << " " << bad;
  }
  EXPECT_GT(project_sources().size(), 50u) << "the scan found the sources";
}

// The namespace a file of `folder` declares its names in: the folder's own under gpulab
// (gpulab::app, gpulab::labs, gpulab::cupti, gpulab::inject, gpulab::report for reports/, each with
// nested namespaces as needed), save the basics every folder uses (reports/base/), which are
// gpulab's own.
bool namespace_fits(const std::string& folder, const std::string& file, const std::string& ns) {
  (void)file;
  static const std::map<std::string, std::string> own = {{"app", "gpulab::app"},
                                                         {"labs", "gpulab::labs"},
                                                         {"labs/harness", "gpulab::labs"},
                                                         {"cupti", "gpulab::cupti"},
                                                         {"reports", "gpulab::report"},
                                                         {"reports/render", "gpulab::report"},
                                                         {"reports/diagnosis", "gpulab::report"},
                                                         {"reports/source", "gpulab::report"},
                                                         {"reports/base", "gpulab"},
                                                         {"inject", "gpulab::inject"}};
  const std::string& want = own.at(folder);
  if (folder == "reports/base") return ns == want;
  return ns == want || ns.rfind(want + "::", 0) == 0;
}

// The top-level `namespace gpulab...` declarations of `text` that do not fit, as "line N: ...".
// A block of forward declarations only (`class RangeProfiler;`) names another folder's classes
// and declares nothing of its own.
std::vector<std::string> misplaced_namespaces(const std::string& folder, const std::string& file,
                                              const std::string& text) {
  static const std::regex declaration(R"(^namespace (gpulab[A-Za-z_:]*) \{)");
  static const std::regex forward(R"(\s*((class|struct) \w+;\s*)*)");
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::vector<std::string> out;
  for (std::size_t n = 0; n < lines.size(); ++n) {
    std::smatch m;
    if (!std::regex_search(lines[n], m, declaration) || namespace_fits(folder, file, m[1]))
      continue;
    std::size_t end = n + 1;  // the block's closing brace
    while (end < lines.size() && lines[end].rfind('}', 0) != 0) ++end;
    bool forward_only = end < lines.size();
    for (std::size_t i = n + 1; i < end && forward_only; ++i)
      forward_only = std::regex_match(lines[i], forward);
    if (!forward_only) out.push_back("line " + std::to_string(n + 1) + ": " + lines[n]);
  }
  return out;
}

TEST(Layering, NamespacesAreFound) {
  EXPECT_TRUE(
      misplaced_namespaces("reports", "reports/units.hpp", "namespace gpulab::report::units {\n")
          .empty());
  EXPECT_TRUE(
      misplaced_namespaces("reports/base", "reports/base/errors.hpp", "namespace gpulab {\n")
          .empty());
  EXPECT_TRUE(misplaced_namespaces("app", "app/cli.cpp", "namespace gpulab::app {\n").empty());
  EXPECT_EQ(
      misplaced_namespaces("reports", "reports/x.hpp", "#pragma once\nnamespace gpulab::render {"),
      std::vector<std::string>{"line 2: namespace gpulab::render {"});
  EXPECT_EQ(misplaced_namespaces("reports", "reports/x.cpp", "namespace gpulab {").size(), 1u);
  EXPECT_EQ(
      misplaced_namespaces("reports/base", "reports/base/errors.hpp", "namespace gpulab::report {")
          .size(),
      1u);
  EXPECT_EQ(misplaced_namespaces("labs", "labs/x.cu", "namespace gpulab::labsx {").size(), 1u);
  EXPECT_EQ(misplaced_namespaces("cupti", "cupti/x.cpp", "namespace gpulab::report {").size(), 1u);
  // Forward declarations of another folder's classes are no declarations of its own.
  EXPECT_TRUE(misplaced_namespaces("app", "app/x.hpp",
                                   "namespace gpulab::cupti {\nclass RangeProfiler;\n}\n")
                  .empty());
  EXPECT_EQ(misplaced_namespaces("app", "app/x.hpp",
                                 "namespace gpulab::cupti {\nclass RangeProfiler;\nint x;\n}\n")
                .size(),
            1u);
}

TEST(Layering, EachFolderDeclaresItsOwnNamespace) {
  for (const auto& s : project_sources())
    for (const auto& bad : misplaced_namespaces(s.folder, s.file, s.text))
      ADD_FAILURE() << s.file << " " << bad;
  EXPECT_GT(project_sources().size(), 50u) << "the scan found the sources";
}

// The folder-level graph, printed: each folder with its lines of code and its share of them, and
// the folders it includes from, with how many include lines. It fails where an arrow runs
// against the order (the test above names the line) or a folder holds more than 30% of the
// code (a folder with more than one job: split it).
TEST(Layering, FolderGraph) {
  std::map<std::string, std::size_t> lines;
  std::map<std::string, std::map<std::string, int>> arrows;
  std::size_t total = 0;
  for (const auto& s : project_sources()) {
    std::istringstream in(s.text);
    for (std::string line; std::getline(in, line);) {
      ++lines[s.folder], ++total;
      std::smatch m;
      if (!std::regex_search(line, m, project_include())) continue;
      const std::string target = folder_of(m[1]);
      if (!target.empty() && target != s.folder) ++arrows[s.folder][target];
    }
  }
  std::string graph =
      fmt::format("{:<18}{:>7}{:>7}  includes from (include lines)\n", "folder", "lines", "share");
  for (const auto& [folder, unused] : order()) {
    std::string to;
    for (const auto& [target, n] : arrows[folder]) to += fmt::format("{} ({}) ", target, n);
    const double share = static_cast<double>(lines[folder]) / static_cast<double>(total);
    graph += fmt::format("{:<18}{:>7}{:>6.0f}%  {}\n", folder, lines[folder], share * 100, to);
    EXPECT_LE(share, 0.30) << folder << " holds " << share * 100 << "% of the code";
    for (const auto& [target, n] : arrows[folder])
      EXPECT_TRUE(allowed(folder).count(target)) << folder << " -> " << target;
  }
  std::cout << graph;
}

}  // namespace
}  // namespace gpulab
