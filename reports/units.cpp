#include "reports/units.hpp"

#include <cmath>

#include <fmt/format.h>

namespace gpulab::report::units {
namespace {

// A whole number with thousands separators (1,234). From 1e15 on, where a double no longer
// holds every integer and rounding nears the end of long long, and for inf and NaN, which
// reports can carry from a user's file: three significant figures (1.23e+15, inf).
std::string whole(double v) {
  if (!std::isfinite(v) || std::fabs(v) >= 1e15) return fmt::format("{:.3g}", v);
  const long long rounded = std::llround(v);
  const std::string digits = std::to_string(rounded < 0 ? -rounded : rounded);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return rounded < 0 ? "-" + out : out;
}

// Three significant figures below 1000 (1.23, 12.3, 123); whole numbers with thousands
// separators above (1,234).
std::string sig3(double v) {
  const double a = std::fabs(v);
  if (a == 0) return "0";
  if (a >= 1000) return whole(v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:#.3g}", v);  // '#' keeps trailing zeros: 0.500, not 0.5
}

// A mantissa of three digits that sig3 would round up to 1000 (999.5 and above) takes the next
// prefix: 999.7 µs is "1.00 ms", not "1000 µs".
constexpr double kRoundsToThousand = 999.5;

// Picks the largest prefix that keeps the mantissa >= 1.
std::string scaled(double v, const char* const* symbols, int n, double step) {
  int i = 0;
  double x = v;
  while (i + 1 < n && std::fabs(x) >= step - (1000.0 - kRoundsToThousand)) {
    x /= step;
    ++i;
  }
  return sig3(x) + " " + symbols[i];
}

// A ratio or a percentage of a value that is infinite, NaN or denormal says nothing: it is shown
// as missing rather than as "+inf%" or "9.84e-312x".
bool meaningless(double v) { return !std::isfinite(v) || (v != 0 && !std::isnormal(v)); }

}  // namespace

std::string seconds(double s) {
  const double a = std::fabs(s);
  if (a == 0) return "0 s";
  if (a < kRoundsToThousand * 1e-9) return sig3(s * 1e9) + " ns";
  if (a < kRoundsToThousand * 1e-6) return sig3(s * 1e6) + " µs";
  if (a < kRoundsToThousand * 1e-3) return sig3(s * 1e3) + " ms";
  return sig3(s) + " s";
}

std::string bytes(double b) {
  static const char* const symbols[] = {"B", "kB", "MB", "GB", "TB"};
  return scaled(b, symbols, 5, 1000.0);
}

std::string bandwidth(double bytes_per_s) { return whole(bytes_per_s / 1e9) + " GB/s"; }

std::string percent(double fraction) {
  if (meaningless(fraction) || meaningless(fraction * 100.0)) return kMissing;
  return fmt::format("{:.1f}%", fraction * 100.0);
}

std::string signed_percent(double change) {
  if (meaningless(change) || meaningless(change * 100.0)) return kMissing;
  return fmt::format("{:+.1f}%", change * 100.0);
}

std::string ratio(double r) { return meaningless(r) ? kMissing : sig3(r) + "x"; }

std::string count(double c) {
  if (std::fabs(c) >= 1e10) return fmt::format("{:.3g}", c);
  if (c == std::floor(c)) return whole(c);
  return sig3(c);
}

std::string number(double v) { return sig3(v); }

std::string hertz(double hz) {
  static const char* const symbols[] = {"Hz", "kHz", "MHz", "GHz"};
  return scaled(hz, symbols, 4, 1000.0);
}

std::string metric(double value, metrics::Unit unit) {
  switch (unit) {
    case metrics::Unit::nanoseconds:
      return seconds(value * 1e-9);
    case metrics::Unit::seconds:
      return seconds(value);
    case metrics::Unit::bytes:
      return bytes(value);
    case metrics::Unit::percent:
      return percent(value / 100.0);
    case metrics::Unit::count:
      return count(value);
    case metrics::Unit::ratio:
      return number(value);
    case metrics::Unit::fraction:
      return percent(value);
    case metrics::Unit::bytes_per_second:
      return bandwidth(value);
  }
  return number(value);
}

}  // namespace gpulab::report::units
