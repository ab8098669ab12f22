#include "reports/render/table.hpp"

#include <algorithm>

namespace gpulab::report {

std::size_t display_width(const std::string& s) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = s[i];
    if (c == 0x1B && i + 1 < s.size() && s[i + 1] == '[') {  // an ANSI color: no width
      while (i < s.size() && s[i] != 'm') ++i;
      continue;
    }
    if ((c & 0xC0) != 0x80) ++width;  // count every byte that starts a code point
  }
  return width;
}

TextTable::TextTable(std::vector<std::string> header, std::size_t left_aligned_columns)
    : header_(std::move(header)), left_aligned_(left_aligned_columns) {}

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

std::string TextTable::render() const {
  std::vector<std::size_t> widths(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (std::size_t c = 0; c < row.size(); ++c)
      widths[c] = std::max(widths[c], display_width(row[c]));
  };
  measure(header_);
  for (const auto& row : rows_) measure(row);

  std::string out;
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(widths[c] - display_width(row[c]), ' ');
      if (c > 0) line += "  ";
      line += c < left_aligned_ ? row[c] + pad : pad + row[c];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  emit(header_);
  for (const auto& row : rows_) emit(row);
  return out;
}

std::string TextTable::render_markdown() const {
  auto escape = [](const std::string& cell) {
    std::string out;
    for (char c : cell) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  };
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line = "|";
    for (const auto& cell : row) line += " " + escape(cell) + " |";
    return line + "\n";
  };
  std::string out = emit(header_) + "|";
  for (std::size_t c = 0; c < header_.size(); ++c) out += c < left_aligned_ ? "---|" : "---:|";
  out += "\n";
  for (const auto& row : rows_) out += emit(row);
  return out;
}

}  // namespace gpulab::report
