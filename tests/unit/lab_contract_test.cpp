// What a lab brings besides its file in labs/ (docs/adding-a-lab.md): its GPU test, under the
// name the H200 scripts select it by, and its fixture (tests/unit/lab_fixtures_test.cpp). And
// docs/labs.md's tables of H200 output, which must not contradict the registry.
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "labs/harness/registry.hpp"
#include "reports/base/input_file.hpp"

namespace gpulab::labs {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = GPULAB_SOURCE_DIR;

// The H200 scripts select a lab's GPU tests as <CamelCase>Gpu.* (lab_test_filter in
// scripts/gpu/common.sh): aos-soa -> AosSoaGpu.
std::string gpu_suite(const std::string& lab) {
  std::string out;
  bool upper = true;
  for (char c : lab) {
    if (c == '-') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out + "Gpu";
}

std::string gpu_test_file(const std::string& lab) {
  std::string stem = lab;
  for (char& c : stem)
    if (c == '-') c = '_';
  return stem + "_gpu_test.cpp";
}

TEST(LabContract, GpuSuiteNames) {
  EXPECT_EQ(gpu_suite("transpose"), "TransposeGpu");
  EXPECT_EQ(gpu_suite("aos-soa"), "AosSoaGpu");
  EXPECT_EQ(gpu_test_file("unified-memory"), "unified_memory_gpu_test.cpp");
}

TEST(LabContract, EveryLabHasItsGpuTestUnderItsSuiteName) {
  std::set<std::string> expected;
  for (const Lab* lab : all_labs()) {
    const std::string name = lab->spec().name;
    const fs::path file = kRoot / "tests" / "gpu" / gpu_test_file(name);
    expected.insert(file.filename().string());
    ASSERT_TRUE(fs::exists(file)) << name << ": no " << file.string();
    const std::string text = read_file(file.string());
    EXPECT_NE(text.find("TEST(" + gpu_suite(name) + ","), std::string::npos)
        << file.string() << " defines no test of suite " << gpu_suite(name);
  }
  for (const auto& entry : fs::directory_iterator(kRoot / "tests" / "gpu")) {
    const std::string file = entry.path().filename().string();
    if (file.size() > 13 && file.compare(file.size() - 13, 13, "_gpu_test.cpp") == 0)
      EXPECT_TRUE(expected.count(file)) << file << " tests no registered lab";
  }
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The lines of the code blocks of a page, block by block.
std::vector<std::vector<std::string>> code_blocks(const fs::path& page) {
  std::istringstream in(read_file(page.string()));
  std::vector<std::vector<std::string>> blocks;
  bool in_block = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) {
      in_block = !in_block;
      if (in_block) blocks.emplace_back();
    } else if (in_block) {
      blocks.back().push_back(line);
    }
  }
  return blocks;
}

// docs/labs.md shows `gpulab run --all` and `gpulab selftest` as run on the H200. A lab it
// shows must be registered, with that baseline and, in the self-test, every variant in the lab's
// order with its role and expected finding. (A lab added since that run need not be there: its
// recorded report is its fixture.)
TEST(LabContract, LabPageTablesAgreeWithTheRegistry) {
  const auto blocks = code_blocks(kRoot / "docs" / "labs.md");
  ASSERT_EQ(blocks.size(), 2u) << "the run --all summary and the selftest table";

  ASSERT_FALSE(blocks[0].empty());
  EXPECT_EQ(words(blocks[0].front()).front(), "lab");
  std::set<std::string> summarized;
  for (std::size_t i = 1; i < blocks[0].size(); ++i) {
    const auto w = words(blocks[0][i]);
    ASSERT_GE(w.size(), 2u) << blocks[0][i];
    const Lab* lab = find_lab(w[0]);
    ASSERT_NE(lab, nullptr) << "docs/labs.md's summary names an unknown lab: " << w[0];
    EXPECT_EQ(w[1], lab->spec().variants.front().name) << w[0] << "'s baseline";
    EXPECT_TRUE(summarized.insert(w[0]).second) << w[0] << " twice";
  }

  std::map<std::string, std::vector<std::vector<std::string>>> rows;  // lab -> its rows' words
  ASSERT_FALSE(blocks[1].empty());
  EXPECT_EQ(words(blocks[1].front()).front(), "lab");
  for (std::size_t i = 1; i < blocks[1].size(); ++i) {
    const auto w = words(blocks[1][i]);
    if (w.empty() || w[0] == "selftest:") continue;
    ASSERT_GE(w.size(), 4u) << blocks[1][i];
    rows[w[0]].push_back(w);
  }
  for (const auto& [name, lab_rows] : rows) {
    const Lab* lab = find_lab(name);
    ASSERT_NE(lab, nullptr) << "docs/labs.md's selftest names an unknown lab: " << name;
    EXPECT_TRUE(summarized.count(name)) << name << " is in one table only";
    const auto& variants = lab->spec().variants;
    ASSERT_EQ(lab_rows.size(), variants.size()) << name << ": every variant, once";
    for (std::size_t i = 0; i < variants.size(); ++i) {
      const auto& v = variants[i];
      EXPECT_EQ(lab_rows[i][1], v.name) << name << " variant " << i;
      EXPECT_EQ(lab_rows[i][2], report::to_string(v.role)) << name << "/" << v.name;
      EXPECT_EQ(lab_rows[i][3], v.expected.text()) << name << "/" << v.name << ": expected finding";
    }
  }
  EXPECT_EQ(rows.size(), summarized.size()) << "the two tables show the same labs";
}

}  // namespace
}  // namespace gpulab::labs
