#include "reports/render/render_html.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "reports/derived.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/diagnosis/limits.hpp"
#include "reports/kernel_name.hpp"
#include "reports/nvtx_filter.hpp"
#include "reports/rank_view.hpp"
#include "reports/render/escape.hpp"
#include "reports/render/html_page.hpp"
#include "reports/render/render_diagnosis.hpp"
#include "reports/render/render_kernel_html.hpp"
#include "reports/render/render_ranks.hpp"
#include "reports/render/roofline.hpp"
#include "reports/render/svg_chart.hpp"
#include "reports/report.hpp"
#include "reports/units.hpp"

namespace gpulab::report {
namespace {

using svg::Axis;

std::string esc(const std::string& s) { return html_safe(s); }

// A table cell's long name is cut in the middle, as a bar's label (kBarLabelChars), wider.
constexpr std::size_t kCellChars = 60;

std::string name_cell(const std::string& name, const std::string& shown) {
  return shown == name ? esc(name)
                       : fmt::format("<span title=\"{}\">{}</span>", esc(name), esc(shown));
}

std::vector<std::string> variant_names(const std::vector<const Variant*>& variants) {
  std::vector<std::string> names;
  for (const auto* v : variants) names.push_back(v->name);
  return names;
}

// Roofline axis labels: "100 GFLOP/s", "10 TFLOP/s".
std::string flops_text(double f) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (f >= 1000 && i < 6) f /= 1000, ++i;
  return units::number(f) + " " + prefixes[i] + "FLOP/s";
}

std::string anchor(const std::string& s) {
  std::string out;
  for (const char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  return out;
}

std::string device_meta(const Report& r) {
  const auto& d = r.device;
  // What was not recorded reads "unknown", never as a zero.
  const auto known = [](double value, const std::string& text) {
    return value > 0 ? text : std::string("unknown");
  };
  std::string out =
      d.name.empty() && d.sm_count == 0
          ? std::string("<dt>device</dt><dd>unknown</dd>\n")
          : fmt::format(
                "<dt>device</dt><dd>{} ({}{}, {} SMs, {} memory, L2 {})</dd>\n",
                d.name.empty() ? "unknown" : esc(d.name), d.chip.empty() ? "" : esc(d.chip) + ", ",
                known(d.cc_major, fmt::format("sm_{}{}", d.cc_major, d.cc_minor)),
                known(d.sm_count, std::to_string(d.sm_count)),
                known(double(d.global_memory_bytes), units::bytes(double(d.global_memory_bytes))),
                known(double(d.l2_bytes), units::bytes(double(d.l2_bytes))));
  out += fmt::format(
      "<dt>roofs</dt><dd>copy {}{}; FP32 {}</dd>\n",
      d.roofs.copy_bandwidth > 0 ? units::bandwidth(d.roofs.copy_bandwidth) + " measured"
                                 : std::string("not measured"),
      d.roofs.theoretical_bandwidth > 0
          ? " (" + units::bandwidth(d.roofs.theoretical_bandwidth) + " theoretical)"
          : std::string(),
      known(fp32_peak_flops(d), units::number(fp32_peak_flops(d) / 1e12) + " TFLOP/s peak"));
  out += fmt::format("<dt>recorded</dt><dd>{} by {} {} ({})</dd>\n", esc(r.created_utc),
                     esc(r.tool.name), esc(r.tool.version), esc(r.tool.git_sha));
  std::string cmd;
  for (const auto& a : r.argv) cmd += (cmd.empty() ? "" : " ") + a;
  if (!cmd.empty()) out += fmt::format("<dt>run as</dt><dd><code>{}</code></dd>\n", esc(cmd));
  return out;
}

const char* role_class(Role role) {
  switch (role) {
    case Role::baseline:
      return "bar baseline";
    case Role::reference:
      return "bar reference";
    case Role::optimized:
    case Role::function:
      return "bar";
  }
  return "bar";
}

// Median times as horizontal bars, in report order (each lab lists its baseline first).
std::string time_bars(const Report& r) {
  std::vector<const Variant*> shown;
  double longest = 0;
  for (const auto& v : r.variants)
    if (v.status == VariantStatus::ok && v.timing.median > 0) {
      shown.push_back(&v);
      longest = std::max(longest, v.timing.median);
    }
  if (shown.empty()) return "<p>No variant was timed.</p>\n";
  const double label_w = 230, bar_w = 460, row_h = 26, width = label_w + bar_w + 260;
  const double height = row_h * shown.size() + 30;
  std::string out =
      "<figure class=\"bars\">\n" + svg::open(width, height, "median time per variant");
  const Axis x{0, longest, label_w, label_w + bar_w, false};
  const auto labels = shortened_apart(variant_names(shown), kBarLabelChars);
  for (const double t : x.ticks()) {
    out += svg::line(x.map(t), 4, x.map(t), height - 22, "grid");
    out += svg::text(x.map(t), height - 8, units::seconds(t), "small", "middle");
  }
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const auto& v = *shown[i];
    const double y = 6 + i * row_h;
    std::string note = units::seconds(v.timing.median);
    if (v.speedup > 0 && v.role != Role::baseline) note += "  ×" + units::number(v.speedup);
    if (v.roof_fraction > 0) note += "  " + units::percent(v.roof_fraction) + " of copy roof";
    out += svg::name_text(label_w - 8, y + 15, v.name, labels[i], "", "end");
    out += svg::rect(label_w, y, x.map(v.timing.median) - label_w, row_h - 8, role_class(v.role),
                     fmt::format("{}: {}", v.name, note));
    out += svg::text(x.map(v.timing.median) + 6, y + 15, note, "small");
  }
  out += svg::close() +
         "<figcaption>Median time of each variant (gray: baseline, purple: "
         "library reference); speedup over the nearest baseline before it, and "
         "effective bandwidth as a share of the measured copy roof.</figcaption>\n"
         "</figure>\n";
  return out;
}

// A profiled program's NVTX ranges, each indented under its parent, with the GPU time of the
// kernels launched inside and its share of the program's kernel time.
std::string ranges_html(const Report& r) {
  if (!r.program || r.program->ranges.empty()) return "";
  std::string out =
      "<h3>NVTX ranges</h3>\n<table class=\"ranges\">\n<tr><th>range</th><th class=\"num\">"
      "launches</th><th class=\"num\">GPU time</th><th class=\"num\">share</th></tr>\n";
  const double total = r.program->kernel_seconds;
  for (const auto& range : r.program->ranges) {
    const auto parts = nvtx_path_parts(range.path);
    out += fmt::format(
        "<tr><td title=\"{}\" style=\"padding-left: {}em\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
        esc(range.path), 0.3 + 1.2 * static_cast<double>(parts.size() - 1), esc(parts.back()),
        range.launches, units::seconds(range.seconds),
        total > 0 ? units::percent(range.seconds / total) : "—");
  }
  return out +
         "</table>\n<p>The launches recorded one by one: each function's first "
         "256 and every profiled one.</p>\n";
}

std::string checks_table(const Report& r) {
  // A reason several variants share (every kernel of a profiled program has no reference to be
  // checked against) is said once, under the table.
  std::map<std::string, int> said;
  for (const auto& v : r.variants)
    if (!v.check.message.empty()) ++said[v.check.message];
  std::string out =
      "<table class=\"checks\">\n<tr><th>variant</th><th>role</th><th>check</th>"
      "<th class=\"num\">max rel. error</th><th class=\"num\">median</th><th class=\"num\">speedup"
      "</th><th class=\"num\">% of copy roof</th></tr>\n";
  std::vector<const Variant*> all;
  for (const auto& v : r.variants) all.push_back(&v);
  const auto names = shortened_apart(variant_names(all), kCellChars);
  for (std::size_t i = 0; i < r.variants.size(); ++i) {
    const Variant& v = r.variants[i];
    const char* status = to_string(v.check.status);
    const bool own_reason = !v.check.message.empty() && said[v.check.message] == 1;
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td class=\"{}\">{}{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
        name_cell(v.name, names[i]), to_string(v.role), status, status,
        own_reason ? ": " + esc(v.check.message) : "",
        v.check.status == CheckStatus::skipped ? "" : units::number(v.check.max_rel_error),
        v.timing.median > 0 ? units::seconds(v.timing.median) : std::string("—"),
        v.speedup > 0 ? units::ratio(v.speedup) : std::string("—"),
        v.roof_fraction > 0 ? units::percent(v.roof_fraction) : std::string("—"));
  }
  out += "</table>\n";
  for (const auto& [message, count] : said)
    if (count > 1)
      out += fmt::format("<p class=\"note\">{} variants: {}</p>\n", count, esc(message));
  return out;
}

// The lab's best variant against its limit (reports/diagnosis/limits.hpp); a profiled program,
// which has no baseline, has neither.
std::string best_variant_html(const Report& r) {
  const auto limit = lab_limit(r);
  if (!r.baseline() || !limit.best) return "";
  return fmt::format("<p class=\"limit\">best variant: <strong>{}</strong>, {}</p>\n",
                     esc(limit.best->name), esc(limit.text()));
}

// One row per lab report: its best variant and how close it comes to its limit.
std::string limits_table(const std::vector<Report>& reports) {
  std::string rows;
  for (const auto& r : reports) {
    const auto limit = lab_limit(r);
    if (!r.baseline() || !limit.best) continue;
    rows += fmt::format(
        "<tr><td><a href=\"#lab-{}\">{}</a></td><td>{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td></tr>\n",
        anchor(r.subject()), esc(r.subject()), esc(limit.best->name),
        units::seconds(limit.best->timing.median), esc(limit.text()));
  }
  if (rows.empty()) return "";
  return "<h2>Best variants</h2>\n<table class=\"limits\">\n<tr><th>lab</th><th>best variant"
         "</th><th class=\"num\">median</th><th class=\"num\">of its limit (reference library, "
         "else copy roof)</th></tr>\n" +
         rows + "</table>\n";
}

// Log-log: FLOP per DRAM byte against FLOP/s, under the copy roof's slope and the FP32 ceiling.
std::string roofline(const Report& r) {
  const auto points = roofline_points(r);
  const double copy = r.device.roofs.copy_bandwidth;
  const double peak = fp32_peak_flops(r.device);
  if (points.empty() || copy <= 0) return "";
  double xmin = points[0].intensity, xmax = xmin, ymin = points[0].attained, ymax = ymin;
  for (const auto& p : points) {
    xmin = std::min(xmin, p.intensity), xmax = std::max(xmax, p.intensity);
    ymin = std::min(ymin, p.attained), ymax = std::max(ymax, p.attained);
  }
  if (peak > 0) {
    xmax = std::max(xmax, 4 * peak / copy);  // the ridge and some of the flat roof
    ymax = std::max(ymax, peak);
  }
  const double left = 100, right = 650, top = 20, bottom = 330;
  const Axis x = svg::decades(xmin / 2, xmax, left, right);
  const Axis y = svg::decades(ymin / 2, ymax * 1.5, bottom, top);
  std::string out = "<figure class=\"roofline\">\n" + svg::open(800, 370, "roofline");
  for (const double t : x.ticks()) {
    out += svg::line(x.map(t), top, x.map(t), bottom, "grid");
    out += svg::text(x.map(t), bottom + 16, units::number(t), "small", "middle");
  }
  for (const double t : y.ticks()) {
    out += svg::line(left, y.map(t), right, y.map(t), "grid");
    out += svg::text(left - 6, y.map(t) + 4, flops_text(t), "small", "end");
  }
  out +=
      svg::line(left, bottom, right, bottom, "axis") + svg::line(left, top, left, bottom, "axis");
  out += svg::text((left + right) / 2, bottom + 34, "arithmetic intensity (FLOP per DRAM byte)", "",
                   "middle");
  out += fmt::format(
      "<text x=\"14\" y=\"{:.1f}\" transform=\"rotate(-90 14 {:.1f})\" "
      "text-anchor=\"middle\">attained FLOP/s</text>\n",
      (top + bottom) / 2, (top + bottom) / 2);
  // The memory roof: attained = copy bandwidth × intensity, until the compute ceiling.
  const double ridge = peak > 0 ? peak / copy : x.hi;
  const double x_end = std::min(ridge, x.hi);
  out += fmt::format("<polyline class=\"roof\" points=\"{:.1f},{:.1f} {:.1f},{:.1f}\"/>\n",
                     x.map(x.lo), y.map(std::max(copy * x.lo, y.lo)), x.map(x_end),
                     y.map(copy * x_end));
  out += svg::text(x.map(x.lo) + 4, y.map(std::max(copy * x.lo, y.lo)) - 6,
                   "copy roof " + units::bandwidth(copy), "small");
  if (peak > 0) {
    out +=
        fmt::format("<polyline class=\"roof compute\" points=\"{:.1f},{:.1f} {:.1f},{:.1f}\"/>\n",
                    x.map(ridge), y.map(peak), x.map(x.hi), y.map(peak));
    out += svg::text(right - 4, y.map(peak) - 6,
                     "FP32 peak " + units::number(peak / 1e12) + " TFLOP/s", "small", "end");
  }
  for (const auto& p : points) {
    const std::string label = p.kernel.empty() ? p.variant : p.variant + " · " + p.kernel;
    const std::string tip =
        fmt::format("{}: {} FLOP/B{}, {} GFLOP/s", label, units::number(p.intensity),
                    p.measured_bytes ? "" : " (work-model bytes: no counters)",
                    units::number(p.attained / 1e9));
    out += svg::circle(x.map(p.intensity), y.map(p.attained), 5,
                       p.measured_bytes ? "point" : "point model", tip, "roofline-point");
    out += svg::text(x.map(p.intensity) + 8, y.map(p.attained) + 4, p.variant, "small");
  }
  out += svg::close() +
         "<figcaption>Roofline: the lab's FLOP count over the DRAM bytes its kernels moved "
         "(counters; hollow points use the work model's bytes), against FLOP/s at the median "
         "time. Red: the measured copy roof; green: the FP32 peak (SMs × FP32 lanes × 2 × "
         "peak clock).</figcaption>\n</figure>\n";
  return out;
}

std::string report_section(const Report& r, const SourceText& text_of) {
  std::string out = fmt::format("<section class=\"lab\" id=\"lab-{}\">\n<h2>{}</h2>\n",
                                anchor(r.subject()), esc(r.subject()));
  if (!r.lab.summary.empty()) out += fmt::format("<p>{}</p>\n", esc(r.lab.summary));
  out += "<dl class=\"meta\">\n" + device_meta(r);
  if (!r.params.empty()) {
    std::string params;
    for (const auto& [name, value] : r.params)
      params += fmt::format("{}{} = {}", params.empty() ? "" : ", ", esc(name), value);
    out += fmt::format("<dt>parameters</dt><dd>{}</dd>\n", params);
  }
  out += "</dl>\n<h3>Variants</h3>\n" + time_bars(r) + checks_table(r) + best_variant_html(r) +
         roofline(r) + ranges_html(r);
  out += "<h3>Kernels</h3>\n";
  for (const auto& v : r.variants) {
    if (v.kernels.empty() && !v.timeline) continue;
    const std::string principal = principal_finding(v);
    out += fmt::format("<details class=\"variant\" open>\n<summary>{}{}</summary>\n", esc(v.name),
                       principal.empty() ? "" : " — principal finding: " + esc(principal));
    if (!v.counters.collected && !v.counters.note.empty())
      out += fmt::format("<p>counters: {}</p>\n", esc(v.counters.note));
    if (v.timeline) out += timeline_html(*v.timeline, v.name);
    if (v.totals && v.kernels.size() > kLaunchesShownEach) {
      out += many_launches_html(v, text_of) + "</details>\n";
      continue;
    }
    // Repeated launches of one function without a diagnosis of their own show once, counted.
    for (std::size_t i = 0; i < v.kernels.size();) {
      std::size_t j = i + 1;
      while (j < v.kernels.size() && !v.kernels[i].diagnosis && !v.kernels[j].diagnosis &&
             v.kernels[j].name == v.kernels[i].name &&
             v.kernels[j].function == v.kernels[i].function)
        ++j;
      out += kernel_html(v.kernels[i], j - i, text_of);
      i = j;
    }
    out += "</details>\n";
  }
  for (const auto& w : r.warnings)
    out += fmt::format("<p class=\"skipped\">warning: {}</p>\n", esc(w));
  return out + "</section>\n";
}

}  // namespace

std::string render_html(const std::vector<Report>& reports, const HtmlPage& page) {
  std::string out = page_head(page.title, page.generator, page.argv);
  std::string labs;
  for (const auto& r : reports)
    labs += fmt::format("{}<a href=\"#lab-{}\">{}</a>", labs.empty() ? "" : ", ",
                        anchor(r.subject()), esc(r.subject()));
  out += fmt::format("<dt>reports</dt><dd>{}</dd>\n</dl>\n</header>\n", labs);
  if (reports.size() > 1) out += limits_table(reports);
  if (are_rank_reports(reports)) out += rank_view_html(rank_view(reports));
  for (const auto& r : reports) out += report_section(r, page.source_text);
  return out + page_tail();
}

}  // namespace gpulab::report
