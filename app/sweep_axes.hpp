// The points of `gpulab sweep LAB --axis NAME=VALUES [--axis ...] [--zip]`: each axis a lab
// parameter (or `size`, the parameters --size sets) and its values, the points the product of
// the axes (or, with --zip, their values taken together, the first of each, then the second),
// all checked against the lab before any GPU work.
//
// VALUES is a list (`1024,4096,16384`), a geometric range START:STOP:*FACTOR (`1Ki:256Mi:*4`:
// START, START*FACTOR, ... up to STOP) or a linear one START:STOP:+STEP (`32:1024:+32`). Each
// value is a whole number, with a binary suffix where wanted: Ki (2^10), Mi (2^20), Gi (2^30).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "labs/harness/lab.hpp"

namespace gpulab::app {

struct SweepAxis {
  std::string name;  // "size" or a parameter of the lab
  std::vector<std::int64_t> values;
  std::string typed;  // as given on the command line, for messages
};

// One point: a value for each axis, by the axis's name.
using SweepPoint = std::map<std::string, std::int64_t>;

// The most values one axis may hold, and the most points a sweep runs without --yes: each point
// times every variant (and, with --metrics, replays it), so a slip in a range must not start an
// hour of GPU work.
inline constexpr std::size_t kMaxAxisValues = 4096;
inline constexpr std::size_t kMaxPointsWithoutYes = 64;
inline constexpr std::size_t kMaxPoints = 100000;  // with --yes

// Throws UsageError naming the text: a malformed range or value, an empty list, a range that
// runs backwards or never grows, more than kMaxAxisValues values.
SweepAxis parse_axis(const std::string& text);

// The points of the axes: their product, the first axis varying slowest; with `zip`, the i-th
// value of every axis (which must all hold as many values). Throws UsageError where two axes
// name the same parameter, zipped axes differ in length, or the product passes kMaxPoints.
std::vector<SweepPoint> sweep_points(const std::vector<SweepAxis>& axes, bool zip);

// Checks the axes against the lab: every name a parameter of it (or `size` where it has one),
// every value within the parameter's range, and at most kMaxPointsWithoutYes points unless
// `yes`. Throws UsageError naming the axis as typed.
void check_sweep(const labs::LabSpec& lab, const std::vector<SweepAxis>& axes, std::size_t points,
                 bool yes);

}  // namespace gpulab::app
