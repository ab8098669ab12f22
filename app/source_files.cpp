#include "app/source_files.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace gpulab::app {

report::SourceText files_on_disk() {
  return [](const std::string& file) -> std::optional<std::string> {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec) ||
        std::filesystem::file_size(file, ec) > kMaxSourceBytes || ec)
      return std::nullopt;
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

std::vector<std::string> embed_files(report::KernelSource& source, const report::SourceText& read) {
  std::set<std::string> named;
  for (const auto& i : source.instructions) {
    if (!i.where) continue;
    named.insert(i.where->file);
    if (!i.where->inlined_file.empty()) named.insert(i.where->inlined_file);
  }
  std::vector<std::string> missing;
  for (const auto& file : named) {
    if (source.files.count(file)) continue;
    if (auto text = read(file))
      source.files[file] = std::move(*text);
    else
      missing.push_back(file);
  }
  return missing;
}

}  // namespace gpulab::app
