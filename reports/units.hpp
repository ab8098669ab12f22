// Numbers with their units, as text for the reports: SI prefixes (1 MB = 1e6 bytes), three
// significant figures. Data stays in SI base units everywhere else; formatting happens only at
// print time.
#pragma once

#include <string>

#include "reports/metric_catalogue.hpp"

namespace gpulab::report::units {

std::string seconds(double s);              // "1.05 ms", "148 µs", "2.31 s"
std::string bytes(double b);                // "268 MB", "1.07 GB", "512 B"
std::string bandwidth(double bytes_per_s);  // "3,630 GB/s"
// What a ratio or percentage of an infinite, NaN or denormal value prints: it is missing.
inline constexpr const char* kMissing = "n/a";

std::string percent(double fraction);       // 0.8612 -> "86.1%"
std::string signed_percent(double change);  // -0.25 -> "-25.0%", 0.1 -> "+10.0%"
std::string ratio(double r);                // "1.00x", "32.5x"
std::string count(double c);                // "1,048,576", "2.15e+09" above 1e10
std::string number(double v);               // three significant figures, no unit
std::string hertz(double hz);               // "1.98 GHz"

// A metric value in its catalogue unit.
std::string metric(double value, metrics::Unit unit);

}  // namespace gpulab::report::units
