#include "reports/render/render_source.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "reports/render/escape.hpp"
#include "reports/render/table.hpp"
#include "reports/source/line_view.hpp"
#include "reports/units.hpp"

namespace gpulab::report {
namespace {

// The figures of a line (or an instruction) in a few words: "97.0% · long_scoreboard 81% ·
// 32.0 sectors/req".
std::string figures_text(const LineFigures& f) {
  std::vector<std::string> parts;
  if (f.share) parts.push_back(units::percent(*f.share));
  if (f.few_samples)  // a reason's share of a handful of samples is noise
    parts.push_back(fmt::format("only {:.0f} samples", *f.samples));
  else if (!f.top_stall.empty() && f.top_stall_share)
    parts.push_back(fmt::format("{} {:.0f}%", f.top_stall, 100 * *f.top_stall_share));
  if (f.sectors_per_request)
    parts.push_back(fmt::format("{:.1f} sectors/req", *f.sectors_per_request));
  if (f.wavefronts_per_shared_request)
    parts.push_back(fmt::format("{:.1f} wavefronts/req", *f.wavefronts_per_shared_request));
  if (f.threads_per_instruction)
    parts.push_back(fmt::format("{:.1f} threads", *f.threads_per_instruction));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " · ") + p;
  return out;
}

// `text` cut to `width` display columns, with an ellipsis where it was cut.
std::string fitted(const std::string& text, std::size_t width) {
  if (display_width(text) <= width) return text;
  std::string out;
  for (std::size_t i = 0; i < text.size() && display_width(out) + 1 < width; ++i) {
    out += text[i];
    // Keep a UTF-8 sequence whole.
    while (i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80)
      out += text[++i];
  }
  return out + "…";
}

// The columns left of `width` once `used` are taken; at least 12, for a line too narrow.
std::size_t room_left(std::size_t width, std::size_t used) {
  return width > used + 12 ? width - used : 12;
}

// `left`, then `right` ending at column `width` (two spaces apart at least).
std::string spread(const std::string& left, const std::string& right, std::size_t width) {
  if (right.empty()) return left;
  const std::size_t used = display_width(left) + display_width(right);
  return left + std::string(used + 2 <= width ? width - used : 2, ' ') + right;
}

std::vector<std::string> lines_of_text(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::string expanded;  // tabs as spaces, so that the columns hold
    for (char ch : line) expanded += ch == '\t' ? std::string(4, ' ') : std::string(1, ch);
    out.push_back(expanded);
  }
  return out;
}

class View {
 public:
  View(const KernelSource& source, const SourceViewOptions& options, const Style& style)
      : source_(source), options_(options), style_(style), lines_(lines_of(source)) {}

  std::string render(const std::string& title, const SourceText& text_of) {
    out_ += paint(terminal_safe(title), Tone::strong, style_) + "\n";
    out_ += header() + "\n";
    if (lines_.rows.empty()) {
      instructions_only();
      return out_;
    }
    const auto hot = hottest(lines_, options_.hot_lines);
    for (const auto* row : hot) hot_.insert(row);
    // The hot lines first, hottest first, then each file with them marked.
    for (const auto* row : hot) {
      std::string where = fmt::format("{}:{}", terminal_safe(row->where.file), row->where.line);
      const std::string figures = figures_text(figures_of(*row, lines_));
      const std::size_t room = room_left(options_.width, 3 + display_width(figures) + 2);
      out_ += spread(paint(">>", Tone::bad, style_) + " " + fitted(where, room), figures,
                     options_.width) +
              "\n";
    }
    for (const auto& file : files_by_heat(hot)) one_file(file, text_of(file));
    if (!lines_.without_line.empty())
      out_ += fmt::format("{} instructions without a line\n", lines_.without_line.size());
    return out_;
  }

 private:
  std::string header() const {
    std::string h = fmt::format("{} instructions, lines from {}", source_.instructions.size(),
                                source_.origin.empty() ? "?" : terminal_safe(source_.origin));
    if (lines_.weight.empty())
      h += "; no per-instruction counters";
    else
      h += fmt::format("; hot by {} ({} in all)", lines_.weight, units::number(lines_.total));
    if (const auto& s = source_.sampling)
      h += fmt::format("; a sample every {} cycles, {} dropped", s->period_cycles,
                       units::number(static_cast<double>(s->dropped)));
    h = fitted(h, options_.width);
    for (const auto& note : source_.notes) h += "\n" + fitted(terminal_safe(note), options_.width);
    return h;
  }

  // Code without line information: its hottest instructions (every one with --sass).
  void instructions_only() {
    out_ += fitted(
                "no line information: build the kernel with -lineinfo (nvcc) to see its source "
                "lines; its instructions by offset:",
                options_.width) +
            "\n";
    std::vector<const SassInstruction*> shown;
    for (const auto& i : source_.instructions) shown.push_back(&i);
    if (!options_.sass && !lines_.weight.empty()) {
      std::stable_sort(shown.begin(), shown.end(), [&](auto* a, auto* b) {
        return weight_of(a->counters, lines_) > weight_of(b->counters, lines_);
      });
    }
    const std::size_t limit =
        options_.sass ? shown.size() : std::min<std::size_t>(shown.size(), 10);
    for (std::size_t k = 0; k < limit; ++k) instruction_line(*shown[k], "  ");
    if (limit < shown.size())
      out_ += fmt::format("  ⋮ {} more (--sass shows every one)\n", shown.size() - limit);
  }

  // The files, the one with the hottest line first.
  std::vector<std::string> files_by_heat(const std::vector<const LineRow*>& hot) const {
    std::vector<std::string> files;
    for (const auto* row : hot)
      if (std::find(files.begin(), files.end(), row->where.file) == files.end())
        files.push_back(row->where.file);
    for (const auto& row : lines_.rows)
      if (std::find(files.begin(), files.end(), row.where.file) == files.end())
        files.push_back(row.where.file);
    return files;
  }

  // A line of the file: its rows merged (one per call site of inlined code).
  struct Line {
    std::map<std::string, double> counters;
    std::vector<const SassInstruction*> instructions;
    std::set<int> inlined_at;  // the call sites' lines, for an inlined function's line
    bool hot = false;
  };

  void one_file(const std::string& file, const std::optional<std::string>& text) {
    out_ += "\n" + paint(fitted(terminal_safe(file), options_.width), Tone::strong, style_) + "\n";
    std::map<int, Line> lines;
    for (const auto& row : lines_.rows) {
      if (row.where.file != file) continue;
      Line& l = lines[row.where.line];
      for (const auto& [name, value] : row.counters) l.counters[name] += value;
      l.instructions.insert(l.instructions.end(), row.instructions.begin(), row.instructions.end());
      if (!row.where.inlined_file.empty()) l.inlined_at.insert(row.where.inlined_line);
      l.hot = l.hot || hot_.count(&row) > 0;
    }
    // The hot lines and their context; without hot lines, every line with instructions.
    std::set<int> shown;
    for (const auto& [number, l] : lines)
      if (l.hot)
        for (int d = -options_.context; d <= options_.context; ++d) shown.insert(number + d);
    if (shown.empty())
      for (const auto& [number, l] : lines) shown.insert(number);
    if (!text) out_ += fitted("(source not found: lines by number only)", options_.width) + "\n";
    const auto source = text ? lines_of_text(*text) : std::vector<std::string>{};
    int previous = 0;
    for (int number : shown) {
      if (number < 1 || (text && number > static_cast<int>(source.size()))) continue;
      const auto l = lines.find(number);
      if (!text && l == lines.end()) continue;
      if (text && number > previous + 1) folded(number - previous - 1);
      previous = number;
      one_line(number, text ? source[number - 1] : "", l == lines.end() ? nullptr : &l->second);
    }
    if (text && static_cast<int>(source.size()) > previous)
      folded(static_cast<int>(source.size()) - previous);
  }

  void folded(int count) {
    out_ += fmt::format("      ⋮ {} line{}\n", count, count == 1 ? "" : "s");
  }

  void one_line(int number, const std::string& code, const Line* l) {
    std::string figures = l ? figures_text(figures_of(l->counters, l->instructions, lines_)) : "";
    if (l && !l->inlined_at.empty()) {
      std::string sites;
      for (int site : l->inlined_at) sites += (sites.empty() ? ":" : ", :") + std::to_string(site);
      figures += (figures.empty() ? "" : " · ") + std::string("inlined at ") + sites;
    }
    const std::string label = fmt::format("{:>5}  ", number);
    const std::size_t fixed = 2 + label.size() + (figures.empty() ? 0 : display_width(figures) + 2);
    const std::size_t room = room_left(options_.width, fixed);
    const std::string shown = fitted(terminal_safe(code), room);
    out_ +=
        spread((l && l->hot ? paint(">>", Tone::bad, style_) : std::string("  ")) + label + shown,
               figures, options_.width) +
        "\n";
    if (options_.sass && l)
      for (const auto* i : l->instructions) instruction_line(*i, "         ");
  }

  void instruction_line(const SassInstruction& i, const std::string& indent) {
    const std::string figures = figures_text(figures_of(i.counters, lines_));
    std::string head = fmt::format("{}/*{:04x}*/ ", indent, i.offset);
    const std::size_t room =
        room_left(options_.width, head.size() + (figures.empty() ? 0 : display_width(figures) + 2));
    out_ += spread(head + fitted(terminal_safe(i.sass), room), figures, options_.width) + "\n";
  }

  const KernelSource& source_;
  const SourceViewOptions& options_;
  const Style& style_;
  LineView lines_;
  std::set<const LineRow*> hot_;
  std::string out_;
};

}  // namespace

std::string render_source(const std::string& title, const KernelSource& source,
                          const SourceViewOptions& options, const SourceText& text_of,
                          const Style& style) {
  return View(source, options, style).render(title, text_of);
}

}  // namespace gpulab::report
