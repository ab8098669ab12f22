// A folder of a test's own under the test's temporary directory, removed afterwards with
// everything in it: no test writes to a shared path.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <stdlib.h>

namespace gpulab::test {

struct TempFolder {
  std::string path;
  TempFolder() {
    std::string tmpl = ::testing::TempDir() + "gpulab-test-XXXXXX";
    path = ::mkdtemp(tmpl.data());
  }
  ~TempFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  std::string operator/(const std::string& name) const { return path + "/" + name; }
  std::vector<std::string> names() const {
    std::vector<std::string> all;
    for (const auto& e : std::filesystem::directory_iterator(path))
      all.push_back(e.path().filename().string());
    return all;
  }
};

}  // namespace gpulab::test
