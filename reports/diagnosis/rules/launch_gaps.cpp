// The rule "launch-gaps" of the timeline walk (docs/diagnosis.md): does the GPU idle between
// kernels as short as a launch? Its finding is the kernel walk's launch rule's.
#include <optional>

#include "reports/diagnosis/rules/rules.hpp"

namespace gpulab::report::walk::rules {
namespace {

// Idle time between kernels that are as short as a launch is time spent launching.
Outcome check(const Probe& p) {
  const auto& s = p.timeline().summary;
  const char* idle = "launch_gaps.idle_fraction";
  const char* duration = "launch.duration_s";
  std::vector<Evidence> ev{
      against(p, "idle_fraction", s.idle_fraction, ">=", idle),
      against(p, "mean_kernel_seconds",
              s.kernels ? std::optional(s.mean_kernel_seconds) : std::nullopt, "<", duration),
      evidence("kernels", s.kernels)};
  // One kernel has no gaps between kernels: the question has its answer.
  if (s.kernels < 2 || s.idle_fraction < p.threshold(idle) ||
      s.mean_kernel_seconds >= p.threshold(duration))
    return no(ev);
  return yes(s.idle_fraction, ev);
}

}  // namespace

const Rule& launch_gaps() {
  static const Rule rule = [] {
    Rule r;
    r.id = "launch-gaps";
    r.question = "Does the GPU idle between kernels as short as a launch?";
    r.expression = "idle time / span, with mean kernel duration < launch.duration_s";
    r.finding = launch().finding;
    r.thresholds = {
        {"launch_gaps.idle_fraction", 0.3, 0, 1,
         "share of a traced variant's time the GPU sits idle between kernels shorter than "
         "launch.duration_s, from which launch overhead counts"}};
    r.quantities = {{"mean_kernel_seconds", metrics::Unit::seconds},
                    {"kernels", metrics::Unit::count}};
    r.check = check;
    r.verdict = "launch-bound";
    return r;
  }();
  return rule;
}

}  // namespace gpulab::report::walk::rules
