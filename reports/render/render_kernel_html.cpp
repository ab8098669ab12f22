#include "reports/render/render_kernel_html.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "reports/diagnosis/diagnosis.hpp"
#include "reports/kernel_name.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/nvtx_filter.hpp"
#include "reports/render/escape.hpp"
#include "reports/render/render_diagnosis.hpp"
#include "reports/render/svg_chart.hpp"
#include "reports/report.hpp"
#include "reports/timeline.hpp"
#include "reports/units.hpp"

namespace gpulab::report {
namespace {

using svg::Axis;

std::string esc(const std::string& s) { return html_safe(s); }

std::string evidence_html(const std::vector<Evidence>& evidence) {
  std::string out;
  for (const auto& e : evidence) {
    if (!out.empty()) out += ", ";
    const auto unit = evidence_unit(e.metric);
    const auto* traits = metrics::find(e.metric);
    out += fmt::format("<code title=\"{}\">{}</code> = {}", esc(e.metric),
                       esc(traits ? traits->short_name : e.metric),
                       e.value ? units::metric(*e.value, unit) : std::string("not measured"));
    if (!e.threshold.empty())
      out += fmt::format(" ({} {} <code>{}</code>)", esc(e.relation),
                         units::metric(e.threshold_value, unit), esc(e.threshold));
  }
  return out;
}

std::string lines_html(const std::vector<FindingLine>& lines) {
  std::string out;
  for (const auto& l : lines)
    out += fmt::format("<br>at <code>{}:{}</code>: {} of {}{}", esc(l.file), l.line,
                       units::percent(l.share), esc(l.what),
                       l.detail.empty() ? "" : ", " + esc(l.detail));
  return out;
}

std::string diagnosis_html(const Diagnosis& d) {
  std::string out = fmt::format("<p>verdict: <strong>{}</strong></p>\n", esc(d.verdict));
  for (const auto& caveat : d.caveats)
    out += fmt::format("<p class=\"caveat\"><em>Caveat:</em> {}</p>\n", esc(caveat));
  out += "<ol class=\"path\">\n";
  for (const auto& s : d.path)
    out += fmt::format(
        "<li style=\"margin-left:{}em\"><code>{}</code> {}<br><span class=\"evidence\">{}</span> → "
        "<span class=\"answer\">{}{}</span></li>\n",
        1.5 * s.depth, esc(s.node), esc(s.question), evidence_html(s.evidence), esc(s.answer),
        s.finding.empty() ? "" : ": " + esc(s.finding));
  out += "</ol>\n";
  if (d.findings.empty()) return out + "<p>findings: none</p>\n";
  out += "<ol class=\"findings\">\n";
  for (const auto& f : d.findings)
    out += fmt::format(
        "<li><span class=\"{}\">[{}]</span> <strong>{}</strong> <code>{}</code><br>{}<br>"
        "{}<em>What to do:</em> {}<br><span class=\"evidence\">{}</span>{}</li>\n",
        esc(f.severity), esc(f.severity), esc(f.title), esc(f.id), esc(f.explanation),
        f.estimate ? "<em>Worth:</em> " + esc(estimate_text(*f.estimate)) + "<br>" : "",
        esc(f.recommendation), evidence_html(f.evidence), lines_html(f.lines));
  return out + "</ol>\n";
}

// The kernel's source view of `gpulab source` (reports/render/render_source.hpp), its hot lines
// marked for the eye.
std::string source_html(const KernelSource& source, const SourceText& text_of) {
  // The report's own copy of a file first, then the page's.
  const SourceText text = [&](const std::string& file) -> std::optional<std::string> {
    if (auto it = source.files.find(file); it != source.files.end()) return it->second;
    return text_of ? text_of(file) : std::nullopt;
  };
  const std::string view = render_source("", source, {}, text, Style());
  std::string out = "<figure class=\"source\"><figcaption>Source lines</figcaption><pre>";
  std::istringstream lines(view);
  std::string line;
  std::getline(lines, line);  // the empty title
  while (std::getline(lines, line))
    out += line.rfind(">>", 0) == 0 ? "<span class=\"hot\">" + esc(line) + "</span>\n"
                                    : esc(line) + "\n";
  return out + "</pre></figure>\n";
}

}  // namespace

std::string kernel_html(const Kernel& k, std::size_t launches, const SourceText& text_of) {
  const auto& a = k.attributes;
  std::string out = fmt::format(
      "<h4>{}{}</h4>\n<p class=\"mono\">{}</p>\n<p>grid {} × block {}, {} registers/thread, {} "
      "local/thread, {} shared, theoretical occupancy {}</p>\n",
      esc(kernel_heading(k.name, k.function)),
      launches > 1 ? fmt::format(" ({} launches)", launches) : std::string(),
      esc(k.function.empty() ? k.name : k.function) +
          (k.nvtx_path.empty() ? "" : " · NVTX " + esc(k.nvtx_path)),
      a.grid_blocks, a.block_threads, a.registers_per_thread,
      units::bytes(double(a.local_bytes_per_thread)),
      units::bytes(double(a.static_shared_bytes + a.dynamic_shared_bytes)),
      units::percent(a.theoretical_occupancy));
  if (k.diagnosis) out += diagnosis_html(*k.diagnosis);
  if (k.source) out += source_html(*k.source, text_of);
  return out;
}

namespace {

// A profiled program's function may have thousands of profiled launches: up to kLaunchesShownEach
// are each shown, and beyond, the function's longest diagnosed launch, the launches whose
// principal finding differs from it (the outliers, the first kOutliersShown of them), its longest
// launches in a table and the rest counted by principal finding. A page of 10,000 launches each
// shown took 60 MB; so, 0.24 MB.
constexpr std::size_t kOutliersShown = 3;
constexpr std::size_t kLongestShown = 10;

std::string principal_of(const Kernel& k) {
  if (!k.diagnosis) return "not diagnosed";
  return k.diagnosis->findings.empty() ? "none" : k.diagnosis->findings.front().id;
}

std::optional<double> duration_of(const Kernel& k) {
  const auto it = k.metrics.find(metrics::name::duration);
  if (it == k.metrics.end()) return std::nullopt;
  return it->second * 1e-9;  // ns
}

std::string longest_launches_html(const Variant& v) {
  std::vector<const Kernel*> timed;
  for (const auto& k : v.kernels)
    if (duration_of(k)) timed.push_back(&k);
  const std::size_t shown = std::min(kLongestShown, timed.size());
  if (shown == 0) return "";
  std::partial_sort(
      timed.begin(), timed.begin() + shown, timed.end(),
      [](const Kernel* a, const Kernel* b) { return *duration_of(*a) > *duration_of(*b); });
  std::string out = fmt::format(
      "<table class=\"launches\">\n<caption>The {} longest of {} profiled launches</caption>\n"
      "<tr><th class=\"num\">launch</th><th class=\"num\">duration</th><th class=\"num\">grid</th>"
      "<th>principal finding</th></tr>\n",
      shown, v.kernels.size());
  for (std::size_t i = 0; i < shown; ++i) {
    const Kernel& k = *timed[i];
    out += fmt::format(
        "<tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td><code>{}</code></td></tr>\n",
        k.launch_index, units::seconds(*duration_of(k)), k.attributes.grid_blocks,
        esc(principal_of(k)));
  }
  return out + "</table>\n";
}

// One row per stream (and one for migrations), and one per CPU thread of a traced program's NVTX
// ranges (an inner range drawn inside its parent), time along x.
std::string gantt(const Timeline& t, const std::string& variant) {
  if (t.activities.empty()) return "";
  std::set<TimelineRow> distinct;
  for (const auto& a : t.activities) distinct.insert(row_of(a));
  const std::vector<TimelineRow> rows(distinct.begin(), distinct.end());
  std::set<std::uint32_t> range_threads;
  for (const auto& s : t.ranges) range_threads.insert(s.thread);
  const bool name_devices = names_devices(t.activities);
  double span = 0;
  for (const auto& a : t.activities) span = std::max(span, a.end);
  for (const auto& s : t.ranges) span = std::max(span, s.end);
  const double left = 110, right = 960, row_h = 26, top = 8;
  const double height = top + row_h * (rows.size() + range_threads.size()) + 34;
  const Axis x{0, span > 0 ? span : 1, left, right, false};
  std::string out = svg::open(980, height, "timeline of " + variant);
  for (const double tick : x.ticks()) {
    out += svg::line(x.map(tick), top, x.map(tick), height - 28, "grid");
    out += svg::text(x.map(tick), height - 14, units::seconds(tick), "small", "middle");
  }
  for (std::size_t i = 0; i < rows.size(); ++i)
    out += svg::text(left - 8, top + i * row_h + 16, row_label(rows[i], name_devices), "", "end");
  for (const auto& a : t.activities) {
    const auto i = std::lower_bound(rows.begin(), rows.end(), row_of(a)) - rows.begin();
    std::string tip = fmt::format("{} {}: {} from {}", to_string(a.kind), a.name,
                                  units::seconds(a.end - a.start), units::seconds(a.start));
    if (a.kind != ActivityKind::kernel) tip += ", " + units::bytes(double(a.bytes));
    if (!a.source_memory.empty()) tip += ", " + a.source_memory + "→" + a.destination_memory;
    if (!a.cause.empty()) tip += ", " + a.cause;
    out += svg::rect(x.map(a.start), top + i * row_h, x.map(a.end) - x.map(a.start), row_h - 8,
                     is_communication(a) ? "communication" : to_string(a.kind), tip);
  }
  std::size_t row = rows.size();
  for (const std::uint32_t thread : range_threads) {
    const double y = top + row++ * row_h;
    out += svg::text(left - 8, y + 16, fmt::format("NVTX {}", thread), "", "end");
    for (const auto& s : t.ranges) {
      if (s.thread != thread) continue;
      const double inset = std::min(3.0 * double(nvtx_path_parts(s.path).size() - 1), 8.0);
      out += svg::rect(x.map(s.start), y + inset / 2, x.map(s.end) - x.map(s.start),
                       row_h - 8 - inset, "nvtx",
                       fmt::format("NVTX {}: {} from {}", s.path, units::seconds(s.end - s.start),
                                   units::seconds(s.start)));
    }
  }
  return out + svg::close();
}

}  // namespace

std::string many_launches_html(const Variant& v, const SourceText& text_of) {
  std::string out;
  for (const auto& launches : diagnosed_functions(v)) {
    const Kernel& first = *launches.front();
    out += kernel_html(first, 1, text_of);
    std::map<std::string, int> principals;
    std::vector<const Kernel*> outliers;
    for (std::size_t i = 1; i < launches.size(); ++i) {
      const std::string principal = principal_of(*launches[i]);
      ++principals[principal];
      if (principal != principal_of(first) && outliers.size() < kOutliersShown)
        outliers.push_back(launches[i]);
    }
    std::string counts;
    for (const auto& [id, n] : principals)
      counts += fmt::format("{}<code>{}</code> ×{}", counts.empty() ? "" : ", ", esc(id), n);
    if (launches.size() > 1)
      out += fmt::format(
          "<p>{} more diagnosed launches of this function, principal findings: {}</p>\n",
          launches.size() - 1, counts);
    for (const Kernel* k : outliers)
      out += fmt::format("<p class=\"outlier\">An outlier, launch {}:</p>\n", k->launch_index) +
             kernel_html(*k, 1, text_of);
  }
  const auto undiagnosed = std::count_if(v.kernels.begin(), v.kernels.end(),
                                         [](const Kernel& k) { return !k.diagnosis; });
  if (undiagnosed > 0)
    out += fmt::format("<p>{} profiled launches not diagnosed.</p>\n", undiagnosed);
  return out + longest_launches_html(v);
}

std::string timeline_html(const Timeline& t, const std::string& variant) {
  const auto& s = t.summary;
  std::string out = "<figure class=\"gantt\">\n" + gantt(t, variant);
  const bool communication = s.communication_seconds > 0;
  out += fmt::format(
      "<figcaption>Blue: kernels, {}amber: copies, gray: memsets, red: unified-memory "
      "migrations{}. Span {}, {} kernels; kernels overlapping transfers {} of the span, GPU idle "
      "{}, exposed transfers {}, on-demand migrations {}.",
      communication ? "purple: NCCL's kernels (communication), " : "",
      t.ranges.empty() ? "" : ", green: NVTX ranges by CPU thread", units::seconds(s.span_seconds),
      s.kernels, units::percent(s.overlap_fraction), units::percent(s.idle_fraction),
      units::percent(s.exposed_transfer_fraction), units::percent(s.on_demand_fraction));
  if (communication)
    out += fmt::format(" Communication {} per GPU, {} of it under compute{}.",
                       units::seconds(s.communication_seconds),
                       units::percent(s.communication_overlap_fraction),
                       s.bus_bandwidth > 0 ? ", bus bandwidth " + units::bandwidth(s.bus_bandwidth)
                                           : std::string());
  out += "</figcaption>\n</figure>\n";
  if (t.diagnosis) out += diagnosis_html(*t.diagnosis);
  return out;
}

}  // namespace gpulab::report
