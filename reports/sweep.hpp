// A sweep (`gpulab sweep`): one lab measured at every point of one or more axes, each point a
// whole lab report. Its JSON is the schema gpulab.sweep/1 (docs/report-schema.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reports/report.hpp"

namespace gpulab::report {

inline constexpr const char* kSweepSchema = "gpulab.sweep/1";

// An axis: a lab parameter, or `size` (the parameters --size sets), and its values in order.
struct SweepAxisValues {
  std::string name;
  std::vector<std::int64_t> values;
};

// A point: a value for each axis, by the axis's name.
using SweepPoint = std::map<std::string, std::int64_t>;

struct SweepPointReport {
  SweepPoint at;
  Report report;  // the lab's report at that point
};

struct Sweep {
  ToolInfo tool;
  std::vector<std::string> argv;
  std::string created_utc;
  std::string lab;
  std::vector<SweepAxisValues> axes;
  bool zip = false;  // the points pair the axes' values; otherwise they are their product
  std::vector<SweepPointReport> points;  // in the order measured: the first axis slowest
};

}  // namespace gpulab::report
