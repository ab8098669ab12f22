#include "reports/render/render_sweep.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "reports/principal.hpp"
#include "reports/render/render_csv.hpp"
#include "reports/render/table.hpp"
#include "reports/sweep_findings.hpp"
#include "reports/units.hpp"

namespace gpulab::report {
namespace {

std::vector<std::string> axis_cells(const Sweep& sweep, const SweepPoint& at) {
  std::vector<std::string> cells;
  for (const auto& a : sweep.axes) cells.push_back(axis_value(at.at(a.name)));
  return cells;
}

bool noisier_than_asked(const TimingStats& t) {
  return t.stopped == TimingStop::settled || t.stopped == TimingStop::timeout;
}

// A variant's cell at one point: `value` of it, or why there is none; a timing that stopped on
// its timeout, or whose noise settled above the target, is marked: it is noisier than asked.
std::string cell(const Report& r, const std::string& variant,
                 const std::function<std::string(const Variant&)>& value) {
  const Variant* v = r.find_variant(variant);
  if (!v) return "-";
  if (v->status != VariantStatus::ok) return to_string(v->status);
  return value(*v) + (noisier_than_asked(v->timing) ? "*" : "");
}

std::string table(const Sweep& sweep, const Style& style,
                  const std::function<std::string(const Variant&)>& value) {
  std::vector<std::string> header;
  for (const auto& a : sweep.axes) header.push_back(a.name);
  const auto names = variant_names(sweep);
  header.insert(header.end(), names.begin(), names.end());
  TextTable t(header, sweep.axes.size());
  for (const auto& p : sweep.points) {
    auto row = axis_cells(sweep, p.at);
    for (const auto& n : names) row.push_back(cell(p.report, n, value));
    t.add_row(std::move(row));
  }
  return style.table == TableStyle::markdown ? t.render_markdown() : t.render();
}

// What a variant's sparkline draws: bandwidth where the lab models bytes (a cache cliff is a
// drop), else time; 0 where it was not measured.
std::vector<double> series(const Sweep& sweep, const std::string& variant, bool bandwidth) {
  std::vector<double> out;
  for (const auto& p : sweep.points) {
    const Variant* v = p.report.find_variant(variant);
    const bool ok = v && v->status == VariantStatus::ok;
    out.push_back(!ok ? 0 : bandwidth ? v->effective_bandwidth : v->timing.median);
  }
  return out;
}

std::string sparklines(const Sweep& sweep, std::size_t width) {
  const bool bandwidth = models_bytes(sweep);
  const auto names = variant_names(sweep);
  std::size_t name_width = 0;
  for (const auto& n : names) name_width = std::max(name_width, n.size());
  constexpr std::size_t kRangeText = 32;  // "  1.05 µs to 2.31 ms"
  if (name_width + 2 + sweep.points.size() + kRangeText > width) return "";
  std::string out = fmt::format("{} at each point, in order:\n",
                                bandwidth ? "effective bandwidth" : "median time");
  for (const auto& n : names) {
    const auto values = series(sweep, n, bandwidth);
    double lo = 0, hi = 0;
    for (double v : values)
      if (v > 0) {
        lo = lo > 0 ? std::min(lo, v) : v;
        hi = std::max(hi, v);
      }
    const auto show = [&](double v) { return bandwidth ? units::bandwidth(v) : units::seconds(v); };
    out += fmt::format("  {:<{}}  {}  {} to {}\n", n, name_width, sparkline(values),
                       hi > 0 ? show(lo) : "-", hi > 0 ? show(hi) : "-");
  }
  return out;
}

}  // namespace

std::string sparkline(const std::vector<double>& values) {
  static const char* const kLevels[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  double lo = 0, hi = 0;
  bool any = false;
  for (double v : values)
    if (v > 0) {
      lo = any ? std::min(lo, v) : v;
      hi = any ? std::max(hi, v) : v;
      any = true;
    }
  std::string out;
  for (double v : values) {
    if (!(v > 0)) {
      out += ' ';
      continue;
    }
    const double at = hi > lo ? (v - lo) / (hi - lo) : 0.5;
    out += kLevels[std::clamp(static_cast<int>(at * 7 + 0.5), 0, 7)];
  }
  return out;
}

std::string render_sweep_text(const Sweep& sweep, const Style& style, std::size_t width) {
  const std::string axes = describe_axes(sweep);
  std::string out =
      fmt::format("sweep {}: {}; {} points\n\n", sweep.lab, axes, sweep.points.size());
  if (sweep.points.empty()) return out;

  out += "median time\n";
  out += table(sweep, style, [](const Variant& v) { return units::seconds(v.timing.median); });
  if (models_bytes(sweep)) {
    out += "\neffective bandwidth (the lab's bytes over the median time)\n";
    out += table(sweep, style, [](const Variant& v) {
      return v.effective_bandwidth > 0 ? units::bandwidth(v.effective_bandwidth) : "-";
    });
  }
  bool timed_out = false;
  for (const auto& p : sweep.points)
    for (const auto& v : p.report.variants) timed_out = timed_out || noisier_than_asked(v.timing);
  if (timed_out)
    out += "* the noise stayed above the target: it settled there, or the timeout came first\n";

  const auto courses = finding_courses(sweep);
  if (!courses.empty()) {
    // A variant whose finding changes along no axis has one finding at every point (the points
    // of a product are connected along its axes): one line says so.
    out += "\nthe principal finding along each axis:\n";
    for (const auto& name : variant_names(sweep)) {
      std::vector<const FindingCourse*> changing;
      const FindingCourse* any = nullptr;
      for (const auto& c : courses)
        if (c.variant == name) {
          any = &c;
          if (c.changes()) changing.push_back(&c);
        }
      if (!any) continue;
      if (changing.empty())
        out += fmt::format("  {}: {} at every point\n", name, any->runs.front().finding);
      for (const auto* c : changing) out += "  " + describe(*c) + "\n";
    }
  }
  const std::string lines = sparklines(sweep, width);
  if (!lines.empty() && style.table == TableStyle::text) out += "\n" + lines;
  return out;
}

std::string sweep_csv(const Sweep& sweep) {
  std::vector<std::string> header;
  for (const auto& a : sweep.axes) header.push_back(a.name);
  for (const char* h :
       {"variant", "role", "status", "median_s", "min_s", "max_s", "stddev_s", "samples", "stopped",
        "effective_bandwidth_Bps", "roof_fraction", "speedup", "principal_finding"})
    header.push_back(h);
  std::string out = csv_line(header);
  const auto number = [](double v) { return fmt::format("{}", v); };
  for (const auto& p : sweep.points) {
    for (const auto& v : p.report.variants) {
      std::vector<std::string> row;  // the values as numbers, for scripts
      for (const auto& a : sweep.axes) row.push_back(std::to_string(p.at.at(a.name)));
      const auto& t = v.timing;
      for (std::string f : {v.name, std::string(to_string(v.role)),
                            std::string(to_string(v.status)), number(t.median), number(t.min),
                            number(t.max), number(t.stddev), std::to_string(t.repeat),
                            std::string(to_string(t.stopped)), number(v.effective_bandwidth),
                            number(v.roof_fraction), number(v.speedup), principal_finding(v)})
        row.push_back(std::move(f));
      out += csv_line(row);
    }
  }
  return out;
}

}  // namespace gpulab::report
