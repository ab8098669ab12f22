#include "reports/source/line_view.hpp"

#include <algorithm>
#include <tuple>

namespace gpulab::report {
namespace {

namespace c = source_counter;

std::optional<double> ratio(const std::map<std::string, double>& counters, const char* part,
                            const char* whole) {
  const auto p = counters.find(part), w = counters.find(whole);
  if (p == counters.end() || w == counters.end() || w->second <= 0) return std::nullopt;
  return p->second / w->second;
}

bool counted(const KernelSource& source, const char* name) {
  return std::any_of(source.instructions.begin(), source.instructions.end(),
                     [name](const SassInstruction& i) { return i.counters.count(name) > 0; });
}

}  // namespace

double weight_of(const std::map<std::string, double>& counters, const LineView& view) {
  auto it = counters.find(view.weight);
  return it == counters.end() ? 0.0 : it->second;
}

LineView lines_of(const KernelSource& source) {
  LineView view;
  view.weight = counted(source, c::samples)         ? c::samples
                : counted(source, c::inst_executed) ? c::inst_executed
                                                    : "";
  for (const auto& i : source.instructions) {
    view.total += weight_of(i.counters, view);
    if (!i.where) {
      view.without_line.push_back(&i);
      continue;
    }
    auto row = std::find_if(view.rows.begin(), view.rows.end(),
                            [&](const LineRow& r) { return r.where == *i.where; });
    if (row == view.rows.end()) {
      view.rows.push_back({*i.where, {}, {}});
      row = view.rows.end() - 1;
    }
    row->instructions.push_back(&i);
    for (const auto& [name, value] : i.counters) row->counters[name] += value;
  }
  std::stable_sort(view.rows.begin(), view.rows.end(), [](const LineRow& a, const LineRow& b) {
    return std::tie(a.where.file, a.where.line) < std::tie(b.where.file, b.where.line);
  });
  return view;
}

std::vector<const LineRow*> hottest(const LineView& view, std::size_t n) {
  std::vector<const LineRow*> out;
  if (view.weight.empty()) return out;
  const auto weight = [&view](const LineRow* r) { return weight_of(r->counters, view); };
  const double floor = view.weight == c::samples ? kMinLineSamples : 0;
  for (const auto& row : view.rows)
    if (weight(&row) > 0 && weight(&row) >= kHotShare * view.total && weight(&row) >= floor)
      out.push_back(&row);
  std::stable_sort(out.begin(), out.end(),
                   [&](const LineRow* a, const LineRow* b) { return weight(a) > weight(b); });
  if (out.size() > n) out.resize(n);
  return out;
}

LineFigures figures_of(const std::map<std::string, double>& counters, const LineView& view) {
  LineFigures f;
  if (view.total > 0 && counters.count(view.weight))
    f.share = weight_of(counters, view) / view.total;
  const std::string prefix = c::stall_prefix;
  double top = 0;
  for (const auto& [name, value] : counters)
    if (name.rfind(prefix, 0) == 0 && value > top) {
      top = value;
      f.top_stall = name.substr(prefix.size());
    }
  if (!f.top_stall.empty())
    f.top_stall_share = ratio(counters, (prefix + f.top_stall).c_str(), c::samples);
  f.sectors_per_request = ratio(counters, c::global_sectors, c::global_requests);
  f.wavefronts_per_shared_request = ratio(counters, c::shared_wavefronts, c::shared_requests);
  f.threads_per_instruction = ratio(counters, c::thread_inst_executed, c::inst_executed);
  if (auto it = counters.find(c::divergent_branches); it != counters.end())
    f.divergent_branches = it->second;
  if (auto it = counters.find(c::samples); it != counters.end()) {
    f.samples = it->second;
    f.few_samples = it->second < kMinLineSamples;
  }
  return f;
}

LineFigures figures_of(const std::map<std::string, double>& counters,
                       const std::vector<const SassInstruction*>& instructions,
                       const LineView& view) {
  LineFigures f = figures_of(counters, view);
  const auto worst = [&instructions](const char* amount, const char* per) {
    std::optional<double> most;
    for (const auto* i : instructions)
      if (const auto r = ratio(i->counters, amount, per); r && (!most || *r > *most)) most = r;
    return most;
  };
  if (auto s = worst(c::global_sectors, c::global_requests)) f.sectors_per_request = s;
  if (auto w = worst(c::shared_wavefronts, c::shared_requests)) f.wavefronts_per_shared_request = w;
  return f;
}

}  // namespace gpulab::report
