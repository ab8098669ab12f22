#include "reports/diagnosis/finding_lines.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "reports/diagnosis/diagnosis_walk.hpp"
#include "reports/source/line_view.hpp"

namespace gpulab::report {
namespace {

const walk::Rule* rule_of(const std::string& finding) {
  for (const walk::Rule* rule : walk::kernel_walk().rules)
    if (finding == rule->finding.id && rule->lines) return rule;
  return nullptr;
}

}  // namespace

void attach_lines(Diagnosis& d, const KernelSource& source) {
  const LineView view = lines_of(source);
  // A line's counters and instructions, the call sites of its inlined code together.
  struct Line {
    std::map<std::string, double> counters;
    std::vector<const SassInstruction*> instructions;
  };
  std::map<std::pair<std::string, int>, Line> by_line;
  for (const auto& row : view.rows) {
    auto& line = by_line[{row.where.file, row.where.line}];
    for (const auto& [name, value] : row.counters) line.counters[name] += value;
    line.instructions.insert(line.instructions.end(), row.instructions.begin(),
                             row.instructions.end());
  }
  for (auto& finding : d.findings) {
    finding.lines.clear();
    const walk::Rule* rule = rule_of(finding.id);
    if (!rule) continue;
    const auto total_of = [&source](const walk::LineMeasure& m) {
      double total = 0;  // over every instruction, those without a line too
      for (const auto& i : source.instructions) total += m.amount(i.counters);
      return total;
    };
    const walk::LineMeasure* chosen = &*rule->lines;
    double total = total_of(*chosen);
    if (total <= 0 && chosen->otherwise) {
      chosen = chosen->otherwise.get();
      total = total_of(*chosen);
    }
    if (total <= 0) continue;
    const auto& measure = *chosen;
    std::vector<std::pair<double, const std::pair<const std::pair<std::string, int>, Line>*>>
        ranked;
    for (const auto& entry : by_line) {
      const double amount = measure.amount(entry.second.counters);
      if (amount > 0) ranked.push_back({amount, &entry});
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    if (ranked.size() > kLinesPerFinding) ranked.resize(kLinesPerFinding);
    for (const auto& [amount, entry] : ranked) {
      FindingLine line;
      line.file = entry->first.first;
      line.line = entry->first.second;
      line.share = amount / total;
      line.what = measure.what;
      line.detail =
          measure.detail(figures_of(entry->second.counters, entry->second.instructions, view));
      finding.lines.push_back(std::move(line));
    }
  }
}

}  // namespace gpulab::report
