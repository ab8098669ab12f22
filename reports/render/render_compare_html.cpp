// The before/after page of `gpulab compare --html` (render_html of comparisons,
// reports/render/render_html.hpp).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "reports/derived.hpp"
#include "reports/diagnosis/compare.hpp"
#include "reports/kernel_name.hpp"
#include "reports/render/escape.hpp"
#include "reports/render/html_page.hpp"
#include "reports/render/render_html.hpp"
#include "reports/render/svg_chart.hpp"
#include "reports/units.hpp"

namespace gpulab::report {
namespace {

using svg::Axis;

std::string esc(const std::string& s) { return html_safe(s); }

std::string change_text(const std::optional<double>& a, const std::optional<double>& b,
                        double change) {
  if (!a || !b) return "—";
  return units::signed_percent(change);
}

std::string comparison_section(const Comparison& c) {
  std::string out = fmt::format(
      "<section class=\"comparison\">\n<h2>Before and after</h2>\n<dl class=\"meta\">\n"
      "<dt>before (A)</dt><dd>{}</dd>\n<dt>after (B)</dt><dd>{}</dd>\n</dl>\n",
      esc(c.label_a), esc(c.label_b));
  for (const auto& w : c.warnings)
    out += fmt::format("<p class=\"skipped\">warning: {}</p>\n", esc(w));
  double longest = 0;
  for (const auto& v : c.variants) {
    if (v.time_a) longest = std::max(longest, v.time_a->median);
    if (v.time_b) longest = std::max(longest, v.time_b->median);
  }
  const double label_w = 200, bar_w = 500, row_h = 18;
  const double height = c.variants.size() * (2 * row_h + 10) + 10;
  const Axis x{0, longest > 0 ? longest : 1, label_w, label_w + bar_w, false};
  out += "<figure class=\"bars\">\n" + svg::open(label_w + bar_w + 200, height, "before and after");
  std::vector<std::string> names;
  for (const auto& v : c.variants) names.push_back(v.lab + "/" + v.label());
  const auto labels = shortened_apart(names, kBarLabelChars - 2);  // 200 pixels, not 230
  for (std::size_t i = 0; i < c.variants.size(); ++i) {
    const auto& v = c.variants[i];
    const double y = 6 + i * (2 * row_h + 10);
    out += svg::name_text(label_w - 8, y + row_h + 2, names[i], labels[i], "", "end");
    if (v.time_a)
      out += svg::rect(label_w, y, x.map(v.time_a->median) - label_w, row_h - 3, "bar baseline",
                       "A: " + units::seconds(v.time_a->median));
    if (v.time_b)
      out += svg::rect(label_w, y + row_h, x.map(v.time_b->median) - label_w, row_h - 3, "bar",
                       "B: " + units::seconds(v.time_b->median));
    out += svg::text(label_w + bar_w + 8, y + row_h + 2,
                     fmt::format("{} ({})", to_string(v.verdict),
                                 v.time_a && v.time_b ? units::signed_percent(v.change) : "—"),
                     "small");
  }
  out += svg::close() +
         "<figcaption>Median times, A (gray) above B (blue); the verdict accounts "
         "for each side's noise.</figcaption>\n</figure>\n";
  for (const auto& v : c.variants) {
    out += fmt::format("<h3>{}/{}</h3>\n<p>{}: {}; noise band ±{:.1f}%</p>\n", esc(v.lab),
                       esc(v.label()), to_string(v.verdict),
                       v.time_a && v.time_b ? units::signed_percent(v.change) : "—", v.noise * 100);
    for (const auto& k : v.kernels) {
      out += fmt::format(
          "<table class=\"deltas\">\n<tr><th>{}</th><th class=\"num\">A</th>"
          "<th class=\"num\">B</th><th class=\"num\">change</th><th>verdict</th>"
          "</tr>\n",
          esc(delta_label(k)));
      for (const auto& m : k.metrics)
        out += fmt::format(
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
            "<td class=\"num\">{}</td><td>{}</td></tr>\n",
            esc(m.label.empty() ? m.name : m.label),
            m.a ? units::metric(*m.a, unit_of(m.name)) : "—",
            m.b ? units::metric(*m.b, unit_of(m.name)) : "—", change_text(m.a, m.b, m.change),
            to_string(m.verdict));
      out += "</table>\n";
    }
    const auto ids = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& id : v)
        s += (s.empty() ? "" : ", ") + std::string("<code>") + esc(id) + "</code>";
      return s.empty() ? std::string("none") : s;
    };
    out += fmt::format("<p>findings resolved: {}; introduced: {}; unchanged: {}</p>\n",
                       ids(v.findings_resolved), ids(v.findings_introduced),
                       ids(v.findings_unchanged));
  }
  return out + "</section>\n";
}

}  // namespace

std::string render_html(const std::vector<Comparison>& comparisons, const HtmlPage& page) {
  std::string out = page_head(page.title, page.generator, page.argv) + "</dl>\n</header>\n";
  for (const auto& c : comparisons) out += comparison_section(c);
  return out + page_tail();
}

}  // namespace gpulab::report
