// A plain aligned text table: a header row, data rows, columns separated by two spaces, the
// first column left-aligned and the others right-aligned (numbers line up on their units).
#pragma once

#include <string>
#include <vector>

namespace gpulab::report {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header, std::size_t left_aligned_columns = 1);
  void add_row(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }
  std::string render() const;
  // The same table in GitHub-flavoured Markdown (right-aligned number columns).
  std::string render_markdown() const;

 private:
  std::vector<std::string> header_;
  std::size_t left_aligned_;
  std::vector<std::vector<std::string>> rows_;
};

// Display width of UTF-8 text: counts code points ("µs" is two columns wide) and skips ANSI
// color sequences.
std::size_t display_width(const std::string& s);

}  // namespace gpulab::report
