// The few pieces the HTML report's charts are drawn with, as inline SVG: axes that map values
// to pixels (linear or logarithmic) with round tick values, and elements whose text is escaped.
// Charts are plain SVG so that the report needs no script and prints as it shows.
#pragma once

#include <string>
#include <vector>

namespace gpulab::report::svg {

struct Axis {
  double lo = 0, hi = 1;          // value range (both > 0 when log)
  double from_px = 0, to_px = 1;  // where lo and hi land (to_px < from_px for a y axis)
  bool log = false;

  double map(double value) const;
  // Round values inside [lo, hi]: powers of ten on a log axis, 1/2/5 steps on a linear one.
  std::vector<double> ticks() const;
};

// A log axis over whole decades that holds every value in [lo, hi] (both > 0).
Axis decades(double lo, double hi, double from_px, double to_px);

std::string open(double width, double height, const std::string& label);  // <svg ...>
std::string close();
std::string line(double x1, double y1, double x2, double y2, const std::string& cls);
std::string rect(double x, double y, double w, double h, const std::string& cls,
                 const std::string& tooltip);
std::string circle(double x, double y, double r, const std::string& cls, const std::string& tooltip,
                   const std::string& data_kind);
// anchor: "start", "middle" or "end".
std::string text(double x, double y, const std::string& content, const std::string& cls,
                 const char* anchor = "start");
// A name as `shown` (cut: reports/kernel_name.hpp, shortened_apart), the whole of it on hover
// where they differ.
std::string name_text(double x, double y, const std::string& name, const std::string& shown,
                      const std::string& cls, const char* anchor = "start");

}  // namespace gpulab::report::svg
