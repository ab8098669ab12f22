// What the source-line tests share: the lines a lab marks `// PROBLEM:` (each the line after its
// comment), and the hand-made fixture of tests/fixtures/source (the naive transpose's real line
// table, per-instruction counters made up by hand, as its warnings say).
#pragma once

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "reports/base/input_file.hpp"

namespace gpulab::test {

inline const std::filesystem::path kSourceRoot = GPULAB_SOURCE_DIR;
inline const std::string kHandMadeSource =
    (kSourceRoot / "tests/fixtures/source/transpose_naive.hand-made.json").string();

inline std::vector<int> marked_lines(const std::filesystem::path& source) {
  std::istringstream in(read_file(source.string()));
  std::vector<int> out;
  int n = 0;
  for (std::string line; std::getline(in, line);)
    if (++n && line.find("// PROBLEM:") != std::string::npos) out.push_back(n + 1);
  return out;
}

// The naive transpose's store: labs/transpose.cu's first marked line.
inline int naive_store_line() { return marked_lines(kSourceRoot / "labs/transpose.cu").at(0); }

}  // namespace gpulab::test
