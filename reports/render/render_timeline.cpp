#include "reports/render/render_timeline.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "reports/render/escape.hpp"
#include "reports/render/table.hpp"
#include "reports/report.hpp"
#include "reports/timeline.hpp"
#include "reports/units.hpp"

namespace gpulab::report {
namespace {

constexpr int kChartWidth = 64;

char symbol(const Activity& a) {
  switch (a.kind) {
    case ActivityKind::kernel:
      return is_communication(a) ? 'C' : 'K';
    case ActivityKind::migration:
      return 'm';
    case ActivityKind::memset:
      return '=';
    case ActivityKind::copy:
      return a.name == "HtoD" ? '>' : a.name == "DtoH" ? '<' : '=';
  }
  return '?';
}

// When a row is shown: always, where unified memory played a part, where GPUs communicated.
enum class Shown { always, unified_memory, communication };

struct Row {
  const char* label;
  std::string (*cell)(const Timeline&);
  Shown when = Shown::always;
};

std::string fraction_or_dash(double value, bool meaningful) {
  return meaningful ? units::percent(value) : "-";
}

const Row kRows[] = {
    {"span (one launch, traced)",
     [](const Timeline& t) { return units::seconds(t.summary.span_seconds); }},
    {"kernels",
     [](const Timeline& t) {
       return fmt::format("{} · {}", t.summary.kernels, units::seconds(t.summary.kernel_seconds));
     }},
    {"mean kernel",
     [](const Timeline& t) {
       return t.summary.kernels ? units::seconds(t.summary.mean_kernel_seconds) : std::string("-");
     }},
    {"transfers (copies, prefetches)",
     [](const Timeline& t) {
       return fmt::format("{} · {}", t.summary.copies, units::seconds(t.summary.transfer_seconds));
     }},
    {"overlap (kernels with transfers)",
     [](const Timeline& t) {
       return fraction_or_dash(t.summary.overlap_fraction, t.summary.span_seconds > 0);
     }},
    {"transfers nothing overlaps",
     [](const Timeline& t) {
       return fraction_or_dash(t.summary.exposed_transfer_fraction, t.summary.span_seconds > 0);
     }},
    {"GPU idle",
     [](const Timeline& t) {
       return fraction_or_dash(t.summary.idle_fraction, t.summary.span_seconds > 0);
     }},
    {"on-demand migration",
     [](const Timeline& t) {
       if (!t.unified_memory.available) return std::string("not measured");
       return fmt::format("{} · {}", units::bytes(static_cast<double>(t.summary.on_demand_bytes)),
                          units::percent(t.summary.on_demand_fraction));
     },
     Shown::unified_memory},
    {"migrated host→device",
     [](const Timeline& t) {
       return t.unified_memory.available
                  ? units::bytes(static_cast<double>(t.summary.migrated_htod_bytes))
                  : std::string("not measured");
     },
     Shown::unified_memory},
    {"migrated device→host",
     [](const Timeline& t) {
       return t.unified_memory.available
                  ? units::bytes(static_cast<double>(t.summary.migrated_dtoh_bytes))
                  : std::string("not measured");
     },
     Shown::unified_memory},
    {"GPU page faults",
     [](const Timeline& t) {
       if (!t.unified_memory.available) return std::string("not measured");
       return t.unified_memory.gpu_page_faults
                  ? units::count(static_cast<double>(*t.unified_memory.gpu_page_faults))
                  : std::string("not reported");
     },
     Shown::unified_memory},
    {"communication (NCCL kernels, per GPU)",
     [](const Timeline& t) { return units::seconds(t.summary.communication_seconds); },
     Shown::communication},
    {"communication under compute",
     [](const Timeline& t) { return units::percent(t.summary.communication_overlap_fraction); },
     Shown::communication},
    {"bus bandwidth (algorithm)",
     [](const Timeline& t) {
       if (t.summary.bus_bandwidth <= 0) return std::string("-");
       return fmt::format("{} ({})", units::bandwidth(t.summary.bus_bandwidth),
                          units::bandwidth(t.summary.algorithm_bandwidth));
     },
     Shown::communication},
};

std::string render(const TextTable& table, const Style& style) {
  return style.table == TableStyle::markdown ? "\n" + table.render_markdown() + "\n"
                                             : table.render();
}

// Unified memory played a part: something migrated or faulted, or its counters were missing
// (then the rows say "not measured").
bool shows_unified_memory(const Timeline& t) {
  const auto& um = t.unified_memory;
  return !um.available || um.cpu_page_faults > 0 || um.gpu_page_faults ||
         t.summary.migrated_htod_bytes + t.summary.migrated_dtoh_bytes > 0;
}

std::string figures_table(const Report& r, const Style& style) {
  std::vector<std::string> head{"timeline"};
  std::vector<const Timeline*> columns;
  bool unified_memory = false, communication = false;
  for (const auto& v : r.variants)
    if (v.timeline) {
      head.push_back(shown(v.name, style));
      columns.push_back(&*v.timeline);
      unified_memory = unified_memory || shows_unified_memory(*v.timeline);
      communication = communication || v.timeline->summary.communication_seconds > 0;
    }
  TextTable table(head);
  for (const auto& row : kRows) {
    if (row.when == Shown::unified_memory && !unified_memory) continue;
    if (row.when == Shown::communication && !communication) continue;
    std::vector<std::string> cells{row.label};
    for (const auto* t : columns) cells.push_back(row.cell(*t));
    table.add_row(cells);
  }
  return render(table, style);
}

std::string rates_table(const Report& r, const Style& style) {
  TextTable table({"copies", "direction", "host memory", "bytes", "count", "busy", "bandwidth"}, 3);
  for (const auto& v : r.variants) {
    if (!v.timeline) continue;
    for (const auto& rate : v.timeline->summary.rates)
      table.add_row({shown(v.name, style), shown(rate.direction, style),
                     shown(rate.host_memory, style), units::bytes(static_cast<double>(rate.bytes)),
                     units::count(rate.count), units::seconds(rate.busy_seconds),
                     rate.bandwidth > 0 ? units::bandwidth(rate.bandwidth) : "-"});
  }
  return table.empty() ? "" : render(table, style);
}

std::string notes(const Report& r, const Style& style) {
  std::string out;
  for (const auto& v : r.variants)
    if (v.timeline && !v.timeline->unified_memory.note.empty())
      out += fmt::format("timeline: {}: {}\n", shown(v.name, style),
                         shown(v.timeline->unified_memory.note, style));
  return out;
}

}  // namespace

std::string timeline_chart(const Timeline& timeline, int width) {
  const auto& acts = timeline.activities;
  if (acts.empty() || width <= 0) return "";
  double first = acts.front().start, last = acts.front().end;
  for (const auto& a : acts) {
    first = std::min(first, a.start);
    last = std::max(last, a.end);
  }
  const double cell = (last - first) / width;
  if (!(cell > 0) || !std::isfinite(cell)) return "";

  // Row -> for each cell, the time each symbol covers in it.
  std::map<TimelineRow, std::vector<std::map<char, double>>> lanes;
  for (const auto& a : acts) {
    auto& cells = lanes[row_of(a)];
    cells.resize(static_cast<std::size_t>(width));
    const int from = std::clamp(static_cast<int>((a.start - first) / cell), 0, width - 1);
    const int to = std::clamp(static_cast<int>((a.end - first) / cell), 0, width - 1);
    for (int i = from; i <= to; ++i) {
      const double lo = first + i * cell, hi = lo + cell;
      const double covered = std::min(hi, a.end) - std::max(lo, a.start);
      if (covered > 0 || a.start == a.end)
        cells[static_cast<std::size_t>(i)][symbol(a)] += std::max(covered, 0.0);
    }
  }
  const bool name_devices = names_devices(acts);
  std::size_t label_width = 0;
  for (const auto& [row, cells] : lanes)
    label_width = std::max(label_width, display_width(row_label(row, name_devices)));
  std::string out;
  for (const auto& [row, cells] : lanes) {
    const std::string lane = row_label(row, name_devices);
    std::string line;
    for (const auto& c : cells) {
      if (c.empty()) {
        line += '.';
        continue;
      }
      line += std::max_element(c.begin(), c.end(), [](const auto& a, const auto& b) {
                return a.second < b.second;
              })->first;
    }
    out += fmt::format("  {}{} |{}|\n", lane, std::string(label_width - display_width(lane), ' '),
                       line);
  }
  return out;
}

std::string render_timelines(const Report& r, const Style& style) {
  const bool any = std::any_of(r.variants.begin(), r.variants.end(),
                               [](const Variant& v) { return v.timeline.has_value(); });
  if (!any) return "";
  std::string out =
      "timeline: one more launch of each variant, recorded by the CUPTI activity API\n";
  out += figures_table(r, style);
  const std::string rates = rates_table(r, style);
  if (!rates.empty()) out += "\n" + rates;
  out += "\n";
  for (const auto& v : r.variants) {
    if (!v.timeline) continue;
    const bool communication = v.timeline->summary.communication_seconds > 0;
    out += fmt::format(
        "{} ({} from first to last activity; K kernel,{} > to device, < to host, "
        "m migration, = other, . idle)\n",
        shown(v.name, style), units::seconds(v.timeline->summary.span_seconds),
        communication ? " C communication (NCCL)," : "");
    out += timeline_chart(*v.timeline, kChartWidth);
  }
  return out + notes(r, style);
}

}  // namespace gpulab::report
