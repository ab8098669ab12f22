#include "reports/render/render_sweep_html.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "reports/render/escape.hpp"
#include "reports/render/html_page.hpp"
#include "reports/render/svg_chart.hpp"
#include "reports/sweep_findings.hpp"
#include "reports/units.hpp"

namespace gpulab::report {
namespace {

constexpr double kWidth = 720, kHeight = 300;
constexpr double kLeft = 80, kRight = 170, kTop = 20, kBottom = 46;  // margins; the legend right
constexpr std::size_t kSeriesClasses = 8;                            // s0 ... s7 in the style

std::string esc(const std::string& s) { return html_safe(s); }

// What a chart plots of a variant at a point: a positive value, or 0 where there is none.
using Quantity = std::function<double(const Variant&)>;

double value_at(const SweepPointReport& p, const std::string& variant, const Quantity& q) {
  const Variant* v = p.report.find_variant(variant);
  return v && v->status == VariantStatus::ok ? q(*v) : 0;
}

// An axis over `values` (all positive ones): logarithmic where they span more than a decade and
// a half, linear from 0 otherwise.
svg::Axis axis_over(const std::vector<double>& values, double from_px, double to_px, bool tight) {
  double lo = 0, hi = 0;
  for (double v : values)
    if (v > 0) {
      lo = lo > 0 ? std::min(lo, v) : v;
      hi = std::max(hi, v);
    }
  if (!(hi > 0)) return {0, 1, from_px, to_px, false};
  if (hi / lo > 30) {
    if (!tight) return svg::decades(lo, hi, from_px, to_px);
    svg::Axis a{lo, hi, from_px, to_px, true};  // the axis's own values: no empty decades
    return a;
  }
  return {tight ? lo : 0, hi * (tight ? 1 : 1.1), from_px, to_px, false};
}

struct Chart {
  std::string title;
  std::string unit;  // what the y axis reads
  Quantity quantity;
  std::function<std::string(double)> show;
  double roof = 0;  // a horizontal line, where positive
  std::string roof_label;
};

// One chart of `line`'s points along `axis`: a polyline and its points per variant, the roof,
// and a dashed vertical line where a variant's principal finding changes.
std::string chart(const Sweep& sweep, const std::string& axis, const std::vector<std::size_t>& line,
                  const Chart& c, const std::vector<FindingCourse>& courses,
                  const SweepPoint& held) {
  const auto names = variant_names(sweep);
  std::vector<double> xs, ys;
  for (std::size_t i : line) xs.push_back(static_cast<double>(sweep.points[i].at.at(axis)));
  for (std::size_t i : line)
    for (const auto& n : names) ys.push_back(value_at(sweep.points[i], n, c.quantity));
  if (c.roof > 0) ys.push_back(c.roof);
  const double right = kWidth - kRight, bottom = kHeight - kBottom;
  const svg::Axis x = axis_over(xs, kLeft, right, true);
  const svg::Axis y = axis_over(ys, bottom, kTop, false);

  std::string held_text;
  for (const auto& [name, value] : held)
    held_text += fmt::format("{}{}={}", held_text.empty() ? " at " : ", ", name, axis_value(value));
  std::string out = "<figure class=\"sweep\">\n" +
                    svg::open(kWidth, kHeight, c.title + " against " + axis + held_text);
  for (double t : y.ticks()) {
    out += svg::line(kLeft, y.map(t), right, y.map(t), "grid");
    out += svg::text(kLeft - 6, y.map(t) + 4, c.show(t), "small", "end");
  }
  for (double v : xs) {
    out += svg::line(x.map(v), bottom, x.map(v), bottom + 4, "axis");
    out += svg::text(x.map(v), bottom + 16, axis_value(static_cast<std::int64_t>(v)), "small",
                     "middle");
  }
  out += svg::line(kLeft, bottom, right, bottom, "axis") +
         svg::line(kLeft, kTop, kLeft, bottom, "axis");
  out += svg::text((kLeft + right) / 2, kHeight - 8, axis + (x.log ? " (log scale)" : ""), "",
                   "middle");
  out += svg::text(12, kTop - 6, c.unit + (y.log ? " (log scale)" : ""), "small");
  if (c.roof > 0) {
    out += svg::line(kLeft, y.map(c.roof), right, y.map(c.roof), "roof");
    out += svg::text(right - 4, y.map(c.roof) - 5, c.roof_label, "small", "end");
  }
  for (std::size_t n = 0; n < names.size(); ++n) {
    const std::string cls = fmt::format("s{}", n % kSeriesClasses);
    double px = 0, py = 0;
    bool drawn = false;
    for (std::size_t k = 0; k < line.size(); ++k) {
      const double v = value_at(sweep.points[line[k]], names[n], c.quantity);
      if (!(v > 0)) {
        drawn = false;  // a gap where the variant was not measured
        continue;
      }
      const double cx = x.map(xs[k]), cy = y.map(v);
      if (drawn) out += svg::line(px, py, cx, cy, "series " + cls);
      out += svg::circle(cx, cy, 3, cls,
                         fmt::format("{} at {}={}: {}", names[n], axis,
                                     axis_value(static_cast<std::int64_t>(xs[k])), c.show(v)),
                         "sweep-point");
      px = cx, py = cy, drawn = true;
    }
    const double ly = kTop + 14 + 16 * static_cast<double>(n);
    out += svg::line(right + 12, ly - 4, right + 30, ly - 4, "series " + cls);
    out += svg::text(right + 36, ly, names[n], "small");
  }
  // Where a finding changes: between the last value of one run and the first of the next.
  for (const auto& course : courses) {
    if (course.axis != axis || course.held != held) continue;
    for (std::size_t r = 1; r < course.runs.size(); ++r) {
      const double a = x.map(static_cast<double>(course.runs[r - 1].last));
      const double b = x.map(static_cast<double>(course.runs[r].first));
      const double at = (a + b) / 2;
      out += svg::line(at, kTop, at, bottom, "change");
      out += svg::circle(
          at, kTop + 4, 3, "change",
          fmt::format("{}: {} up to {}={}, {} from {}", course.variant, course.runs[r - 1].finding,
                      axis, axis_value(course.runs[r - 1].last), course.runs[r].finding,
                      axis_value(course.runs[r].first)),
          "finding-change");
    }
  }
  out += svg::close() + fmt::format("<figcaption>{} of each variant against {}{}", esc(c.title),
                                    esc(axis), esc(held_text));
  out += x.log ? " (logarithmic axis)" : "";
  out += "; dashed: where a variant's principal finding changes (hover for which).</figcaption>\n";
  return out + "</figure>\n";
}

std::string points_table(const Sweep& sweep) {
  const auto names = variant_names(sweep);
  std::string out = "<table>\n<tr>";
  for (const auto& a : sweep.axes) out += "<th class=\"num\">" + esc(a.name) + "</th>";
  for (const auto& n : names) out += "<th class=\"num\">" + esc(n) + "</th>";
  out += "</tr>\n";
  for (const auto& p : sweep.points) {
    out += "<tr>";
    for (const auto& a : sweep.axes)
      out += "<td class=\"num\">" + esc(axis_value(p.at.at(a.name))) + "</td>";
    for (const auto& n : names) {
      const Variant* v = p.report.find_variant(n);
      const std::string cell = !v                               ? "-"
                               : v->status != VariantStatus::ok ? to_string(v->status)
                                                                : units::seconds(v->timing.median);
      out += "<td class=\"num\">" + esc(cell) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::string sweep_section(const Sweep& sweep) {
  const std::string axes = describe_axes(sweep);
  std::string out = fmt::format("<section>\n<h2>sweep {}: {}</h2>\n", esc(sweep.lab), esc(axes));
  if (sweep.points.empty()) return out + "<p>No point was measured.</p>\n</section>\n";
  const auto& device = sweep.points.front().report.device;
  out += fmt::format("<p>{} · {} points · {}</p>\n", esc(device.name), sweep.points.size(),
                     esc(sweep.created_utc));

  const bool bytes = models_bytes(sweep);
  std::vector<Chart> charts{{"median time", "time",
                             [](const Variant& v) { return v.timing.median; },
                             [](double s) { return units::seconds(s); }, 0, ""}};
  if (bytes)
    charts.push_back({"effective bandwidth", "bandwidth",
                      [](const Variant& v) { return v.effective_bandwidth; },
                      [](double b) { return units::bandwidth(b); }, device.roofs.copy_bandwidth,
                      "copy roof " + units::bandwidth(device.roofs.copy_bandwidth)});
  const auto courses = finding_courses(sweep);
  for (const auto& axis : sweep.axes) {
    const auto lines = lines_along(sweep, axis.name);
    for (const auto& c : charts) {
      for (std::size_t l = 0; l < lines.size() && l < kMaxLinesPerAxis; ++l) {
        SweepPoint held = sweep.zip ? SweepPoint{} : sweep.points[lines[l].front()].at;
        held.erase(axis.name);
        out += chart(sweep, axis.name, lines[l], c, courses, held);
      }
      if (lines.size() > kMaxLinesPerAxis)
        out += fmt::format(
            "<p>{} more plots of {} against {} left out (one per value of the "
            "other axes): the table below has every point.</p>\n",
            lines.size() - kMaxLinesPerAxis, esc(c.title), esc(axis.name));
    }
    if (sweep.zip) break;  // the axes move together: the first one's plots show them
  }
  if (!courses.empty()) {
    out += "<h3>The principal finding along each axis</h3>\n<ul>\n";
    for (const auto& c : courses)
      if (c.changes()) out += "<li>" + esc(describe(c)) + "</li>\n";
    out += "</ul>\n";
  }
  out += "<h3>Median time at each point</h3>\n" + points_table(sweep);
  return out + "</section>\n";
}

}  // namespace

std::string render_sweep_html(const std::vector<Sweep>& sweeps, const std::string& generator,
                              const std::vector<std::string>& argv) {
  std::string out =
      page_head(sweeps.size() == 1 ? "gpulab sweep of " + sweeps[0].lab : "gpulab sweeps",
                generator, argv) +
      "</dl>\n</header>\n";
  for (const auto& s : sweeps) out += sweep_section(s);
  return out + page_tail();
}

}  // namespace gpulab::report
