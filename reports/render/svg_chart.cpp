#include "reports/render/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "reports/render/escape.hpp"

namespace gpulab::report::svg {
namespace {

// The most ticks an axis draws: an axis is drawn for any values a report holds, degenerate ones
// (0, a denormal, 1e308) included, and must end.
constexpr std::size_t kMaxTicks = 64;

}  // namespace

double Axis::map(double value) const {
  double t = 0;
  if (log) {
    const double v = std::max(value, lo);
    t = (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  } else {
    t = hi == lo ? 0 : (value - lo) / (hi - lo);
  }
  return from_px + t * (to_px - from_px);
}

std::vector<double> Axis::ticks() const {
  std::vector<double> out;
  if (!std::isfinite(lo) || !std::isfinite(hi)) return out;
  if (log) {
    if (!(lo > 0) || hi < lo) return out;
    for (double e = std::ceil(std::log10(lo) - 1e-9);
         e <= std::log10(hi) + 1e-9 && out.size() < kMaxTicks; e += 1)
      out.push_back(std::pow(10.0, e));
    return out;
  }
  const double span = hi - lo;
  if (!(span > 0) || !std::isfinite(span)) return {lo};
  const double raw = span / 5;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  if (!(step > 0) || !std::isfinite(step)) return {lo};  // a span too small for a step
  // Counted, not summed: v += step stops moving where step is below v's precision.
  const double first = std::ceil(lo / step) * step;
  for (std::size_t i = 0; i < kMaxTicks; ++i) {
    const double v = first + static_cast<double>(i) * step;
    if (v > hi + step * 1e-9) break;
    out.push_back(v);
  }
  return out;
}

Axis decades(double lo, double hi, double from_px, double to_px) {
  Axis a;
  a.log = true;
  // A log axis needs a positive, finite, normal range: anything else draws one decade.
  if (!(lo >= std::numeric_limits<double>::min()) || !std::isfinite(lo)) lo = 1;
  if (!(hi >= lo) || !std::isfinite(hi)) hi = lo;
  a.lo = std::pow(10.0, std::floor(std::log10(lo)));
  a.hi = std::pow(10.0, std::ceil(std::log10(hi)));
  if (a.hi <= a.lo) a.hi = a.lo * 10;
  a.from_px = from_px;
  a.to_px = to_px;
  return a;
}

std::string open(double width, double height, const std::string& label) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {:.0f} {:.0f}\" width=\"{:.0f}\" "
      "height=\"{:.0f}\" role=\"img\" aria-label=\"{}\">\n",
      width, height, width, height, html_safe(label));
}

std::string close() { return "</svg>\n"; }

std::string line(double x1, double y1, double x2, double y2, const std::string& cls) {
  return fmt::format(
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" class=\"{}\"/>\n", x1, y1, x2,
      y2, cls);
}

std::string rect(double x, double y, double w, double h, const std::string& cls,
                 const std::string& tooltip) {
  return fmt::format(
      "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" class=\"{}\"><title>{}"
      "</title></rect>\n",
      x, y, std::max(w, 0.5), h, cls, html_safe(tooltip));
}

std::string circle(double x, double y, double r, const std::string& cls, const std::string& tooltip,
                   const std::string& data_kind) {
  return fmt::format(
      "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\" class=\"{}\" data-kind=\"{}\"><title>{}"
      "</title></circle>\n",
      x, y, r, cls, data_kind, html_safe(tooltip));
}

std::string text(double x, double y, const std::string& content, const std::string& cls,
                 const char* anchor) {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"{}\" text-anchor=\"{}\">{}</text>\n",
                     x, y, cls, anchor, html_safe(content));
}

std::string name_text(double x, double y, const std::string& name, const std::string& shown,
                      const std::string& cls, const char* anchor) {
  if (shown == name) return text(x, y, name, cls, anchor);
  return fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"{}\" "
      "text-anchor=\"{}\"><title>{}</title>{}</text>\n",
      x, y, cls, anchor, html_safe(name), html_safe(shown));
}

}  // namespace gpulab::report::svg
