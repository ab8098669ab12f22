#include "app/source_files.hpp"

#include <fstream>
#include <sstream>

namespace gpulab::app {

report::SourceText files_on_disk() {
  return [](const std::string& file) -> std::optional<std::string> {
    std::ifstream in(file, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  };
}

report::SourceText source_text(const report::KernelSource& source) {
  return [&source, disk = files_on_disk()](const std::string& file) -> std::optional<std::string> {
    if (auto it = source.files.find(file); it != source.files.end()) return it->second;
    return disk(file);
  };
}

}  // namespace gpulab::app
