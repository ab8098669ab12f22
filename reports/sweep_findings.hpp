// Where a sweep's diagnosis changes: for each variant, its principal finding along each axis
// (the other axes held at each of their values), as runs of consecutive points that share it.
// This is what a sweep says that a curve alone does not: why the curve bends where it does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/sweep.hpp"

namespace gpulab::report {

struct FindingRun {
  std::string finding;  // the principal finding's id, "none", or the variant's failed/skipped
  std::int64_t first = 0, last = 0;  // the axis's values where the run begins and ends
};

struct FindingCourse {
  std::string variant;
  std::string axis;
  SweepPoint held;  // the other axes' values (empty for one axis, and for zipped axes)
  std::vector<FindingRun> runs;
  bool changes() const { return runs.size() > 1; }
};

// The points' indices along `axis`: one line for each combination of the other axes' values (a
// single line for zipped axes), each in the order measured, the lines in the order the points
// met them.
std::vector<std::vector<std::size_t>> lines_along(const Sweep& sweep, const std::string& axis);

// Every variant's course along every axis, in the order of the variants of the first point,
// then the axes, then the held values as the points met them. Zipped axes move together: one
// course each, along the first axis. Empty when no point's report was diagnosed.
std::vector<FindingCourse> finding_courses(const Sweep& sweep);

// "padded: memory-bound-at-roof up to size 2048, memory-bound-below-roof from size 4096", with
// "at block=128: " first where other axes are held; "padded: latency-bound at every size"
// where nothing changes.
std::string describe(const FindingCourse& course);

// The variants of a sweep, in its first point's order (every point runs the same ones).
std::vector<std::string> variant_names(const Sweep& sweep);

// Whether any point's variant has an effective bandwidth (the lab models its bytes).
bool models_bytes(const Sweep& sweep);

// "size 4096 to 8192 (2 values)", the axes joined by " by " (a product) or " with " (zipped).
std::string describe_axes(const Sweep& sweep);

// An axis value as typed back: 1Ki, 2Mi, 1Gi where a whole number of those from 1Mi, the
// number itself otherwise.
std::string axis_value(std::int64_t value);

}  // namespace gpulab::report
