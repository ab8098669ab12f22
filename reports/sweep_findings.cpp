#include "reports/sweep_findings.hpp"

#include <fmt/format.h>

#include "reports/principal.hpp"

namespace gpulab::report {
namespace {

// What a variant found at one point: its principal finding, "none" where the walk found
// nothing, or why it was not measured there.
std::string finding_at(const Report& report, const std::string& variant) {
  const Variant* v = report.find_variant(variant);
  if (!v) return "absent";
  if (v->status != VariantStatus::ok) return to_string(v->status);
  const std::string finding = principal_finding(*v);
  return finding.empty() ? "none" : finding;
}

}  // namespace

std::vector<std::vector<std::size_t>> lines_along(const Sweep& sweep, const std::string& axis) {
  std::vector<SweepPoint> held;
  std::vector<std::vector<std::size_t>> lines;
  for (std::size_t i = 0; i < sweep.points.size(); ++i) {
    SweepPoint others = sweep.points[i].at;
    if (!sweep.zip)
      others.erase(axis);
    else
      others.clear();
    std::size_t line = 0;
    while (line < held.size() && held[line] != others) ++line;
    if (line == held.size()) {
      held.push_back(others);
      lines.emplace_back();
    }
    lines[line].push_back(i);
  }
  return lines;
}

std::vector<FindingCourse> finding_courses(const Sweep& sweep) {
  bool diagnosed = false;
  for (const auto& p : sweep.points) diagnosed = diagnosed || has_diagnosis(p.report);
  if (!diagnosed || sweep.points.empty() || sweep.axes.empty()) return {};

  std::vector<FindingCourse> out;
  for (const auto& v : sweep.points.front().report.variants) {
    for (const auto& axis : sweep.axes) {
      for (const auto& line : lines_along(sweep, axis.name)) {
        FindingCourse course{v.name, axis.name, sweep.points[line.front()].at, {}};
        course.held.erase(axis.name);
        if (sweep.zip) course.held.clear();
        for (std::size_t i : line) {
          const auto& point = sweep.points[i];
          const std::int64_t value = point.at.at(axis.name);
          std::string finding = finding_at(point.report, v.name);
          if (course.runs.empty() || course.runs.back().finding != finding)
            course.runs.push_back({std::move(finding), value, value});
          else
            course.runs.back().last = value;
        }
        out.push_back(std::move(course));
      }
      if (sweep.zip) break;  // the axes move together: one course says it
    }
  }
  return out;
}

std::vector<std::string> variant_names(const Sweep& sweep) {
  std::vector<std::string> names;
  if (!sweep.points.empty())
    for (const auto& v : sweep.points.front().report.variants) names.push_back(v.name);
  return names;
}

bool models_bytes(const Sweep& sweep) {
  for (const auto& p : sweep.points)
    for (const auto& v : p.report.variants)
      if (v.effective_bandwidth > 0) return true;
  return false;
}

std::string describe_axes(const Sweep& sweep) {
  std::string axes;
  for (const auto& a : sweep.axes)
    axes += fmt::format("{}{} {} to {} ({} values)",
                        axes.empty() ? ""
                        : sweep.zip  ? " with "
                                     : " by ",
                        a.name, axis_value(a.values.front()), axis_value(a.values.back()),
                        a.values.size());
  return axes;
}

std::string axis_value(std::int64_t value) {
  constexpr std::int64_t kKi = 1024, kMi = kKi * kKi, kGi = kMi * kKi;
  if (value >= kGi && value % kGi == 0) return fmt::format("{}Gi", value / kGi);
  if (value >= kMi && value % kMi == 0) return fmt::format("{}Mi", value / kMi);
  if (value >= kMi && value % kKi == 0) return fmt::format("{}Ki", value / kKi);
  return std::to_string(value);
}

std::string describe(const FindingCourse& course) {
  std::string held;
  for (const auto& [name, value] : course.held)
    held += fmt::format("{}{}={}", held.empty() ? "at " : ", ", name, axis_value(value));
  std::string text = held.empty() ? "" : held + ": ";
  text += course.variant + ": ";
  const auto& runs = course.runs;
  if (runs.size() == 1) return text + fmt::format("{} at every {}", runs[0].finding, course.axis);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    const std::string from = axis_value(r.first), to = axis_value(r.last);
    if (i > 0) text += ", ";
    if (i == 0)
      text += fmt::format("{} up to {} {}", r.finding, course.axis, to);
    else if (i + 1 == runs.size())
      text += fmt::format("{} from {} {}", r.finding, course.axis, from);
    else if (r.first == r.last)
      text += fmt::format("{} at {} {}", r.finding, course.axis, from);
    else
      text += fmt::format("{} from {} {} to {}", r.finding, course.axis, from, to);
  }
  return text;
}

}  // namespace gpulab::report
