#include "app/sweep_axes.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "reports/base/errors.hpp"
#include "reports/base/user_input.hpp"

namespace gpulab::app {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

// "4Ki" → 4096: a whole number, then at most one binary suffix.
std::int64_t parse_value(const std::string& what, const std::string& text) {
  static const std::pair<const char*, int> kSuffixes[] = {{"Ki", 10}, {"Mi", 20}, {"Gi", 30}};
  std::string digits = text;
  int shift = 0;
  for (const auto& [suffix, bits] : kSuffixes) {
    const std::string s = suffix;
    if (text.size() > s.size() && text.compare(text.size() - s.size(), s.size(), s) == 0) {
      digits = text.substr(0, text.size() - s.size());
      shift = bits;
    }
  }
  std::int64_t n = 0;
  try {
    n = parse_integer("", digits);
  } catch (const UsageError&) {
    throw UsageError(
        fmt::format("{}: '{}' is not a whole number (with Ki, Mi or Gi where wanted)", what, text));
  }
  if (n > (kMax >> shift) || n < -(kMax >> shift))
    throw UsageError(fmt::format("{}: '{}' is out of the 64-bit range", what, text));
  return n * (std::int64_t{1} << shift);
}

std::vector<std::int64_t> range_values(const std::string& what, const std::string& text) {
  const auto first = text.find(':'), second = text.find(':', first + 1);
  if (second == std::string::npos || text.find(':', second + 1) != std::string::npos ||
      second + 1 >= text.size() || (text[second + 1] != '*' && text[second + 1] != '+'))
    throw UsageError(fmt::format("{}: '{}' is not a range (START:STOP:*FACTOR or START:STOP:+STEP)",
                                 what, text));
  const std::int64_t start = parse_value(what, text.substr(0, first));
  const std::int64_t stop = parse_value(what, text.substr(first + 1, second - first - 1));
  const bool geometric = text[second + 1] == '*';
  const std::int64_t by = parse_value(what, text.substr(second + 2));
  if (stop < start)
    throw UsageError(fmt::format("{}: '{}' runs backwards ({} is below {})", what, text,
                                 text.substr(first + 1, second - first - 1),
                                 text.substr(0, first)));
  if (geometric ? (by < 2 || start < 1) : by < 1)
    throw UsageError(fmt::format(
        "{}: '{}' never grows ({})", what, text,
        geometric ? "a geometric range needs a factor of 2 or more and a start of 1 or more"
                  : "a linear range needs a step of 1 or more"));
  std::vector<std::int64_t> values;
  for (std::int64_t v = start;;) {
    if (values.size() == kMaxAxisValues)
      throw UsageError(
          fmt::format("{}: '{}' holds more than {} values", what, text, kMaxAxisValues));
    values.push_back(v);
    if (geometric ? v > stop / by : v > stop - by) break;  // the next would pass STOP
    v = geometric ? v * by : v + by;
  }
  return values;
}

}  // namespace

SweepAxis parse_axis(const std::string& text) {
  const auto [name, values] = split_assignment("--axis", text);
  const std::string what = "--axis " + text;
  SweepAxis axis;
  axis.name = name;
  axis.typed = text;
  if (values.find(':') != std::string::npos) {
    axis.values = range_values(what, values);
  } else {
    for (const auto& item : split_list(what, values))
      axis.values.push_back(parse_value(what, item));
    if (axis.values.size() > kMaxAxisValues)
      throw UsageError(fmt::format("{}: more than {} values", what, kMaxAxisValues));
  }
  return axis;
}

std::vector<SweepPoint> sweep_points(const std::vector<SweepAxis>& axes, bool zip) {
  std::set<std::string> names;
  for (const auto& a : axes)
    if (!names.insert(a.name).second)
      throw UsageError(fmt::format("--axis {}: '{}' has an axis already", a.typed, a.name));
  std::vector<SweepPoint> points;
  if (axes.empty()) return points;
  if (zip) {
    for (const auto& a : axes)
      if (a.values.size() != axes.front().values.size())
        throw UsageError(fmt::format(
            "--zip pairs the axes' values one by one: --axis {} holds {} values, --axis {} {}",
            axes.front().typed, axes.front().values.size(), a.typed, a.values.size()));
    for (std::size_t i = 0; i < axes.front().values.size(); ++i) {
      SweepPoint p;
      for (const auto& a : axes) p[a.name] = a.values[i];
      points.push_back(std::move(p));
    }
    return points;
  }
  std::size_t count = 1;
  for (const auto& a : axes) {
    if (count > kMaxPoints / a.values.size())
      throw UsageError(fmt::format("the axes' product holds more than {} points", kMaxPoints));
    count *= a.values.size();
  }
  points.push_back({});
  for (const auto& a : axes) {  // the first axis varies slowest
    std::vector<SweepPoint> grown;
    grown.reserve(points.size() * a.values.size());
    for (const auto& p : points)
      for (const auto v : a.values) {
        SweepPoint q = p;
        q[a.name] = v;
        grown.push_back(std::move(q));
      }
    points = std::move(grown);
  }
  return points;
}

void check_sweep(const labs::LabSpec& lab, const std::vector<SweepAxis>& axes, std::size_t points,
                 bool yes) {
  if (axes.empty())
    throw UsageError(
        fmt::format("sweep needs an axis: --axis NAME=VALUES (size, or a parameter "
                    "of lab '{}')",
                    lab.name));
  for (const auto& a : axes) {
    std::vector<const labs::ParamSpec*> params;
    std::vector<std::string> known{"size"};
    for (const auto& p : lab.params) {
      known.push_back(p.name);
      if (a.name == "size" ? p.set_by_size : p.name == a.name) params.push_back(&p);
    }
    if (params.empty()) {
      const std::string hint = did_you_mean(a.name, known);
      throw UsageError(fmt::format("--axis {}: lab '{}' has no {} '{}'{}", a.typed, lab.name,
                                   a.name == "size" ? "size parameter" : "parameter", a.name,
                                   hint.empty() ? "" : ": " + hint));
    }
    for (const auto* p : params)
      for (const auto v : a.values)
        if (v < p->min || v > p->max)
          throw UsageError(
              fmt::format("--axis {}: {} is out of range for lab '{}' ({}: allowed "
                          "{} to {})",
                          a.typed, v, lab.name, p->name, p->min, p->max));
  }
  if (points > kMaxPointsWithoutYes && !yes)
    throw UsageError(
        fmt::format("the sweep has {} points, more than {} without --yes (each times "
                    "every variant): narrow the axes, or add --yes",
                    points, kMaxPointsWithoutYes));
}

}  // namespace gpulab::app
