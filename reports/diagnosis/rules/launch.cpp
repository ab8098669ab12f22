// The rule "launch" (docs/diagnosis.md): is the kernel as short as a launch?
#include "reports/diagnosis/rules/rules.hpp"

#include "reports/metric_catalogue.hpp"

namespace gpulab::report::walk::rules {
namespace {

namespace m = metrics::name;

Outcome check(const Probe& p) {
  auto ns = p.metric(m::duration);
  std::optional<double> seconds;
  if (ns) seconds = *ns * 1e-9;
  const std::string t = "launch.duration_s";
  // Launched fewer than launch.min_launches times, a kernel this short never gets here
  // (too_little_work, below).
  std::vector<Evidence> ev{against(p, "duration_s", seconds, "<", t),
                           evidence("launches", static_cast<double>(p.context().launches))};
  if (!seconds) return not_measured(ev);
  if (*seconds >= p.threshold(t)) return no(ev);
  return yes(1.0 - *seconds / p.threshold(t), ev);
}

}  // namespace

const Rule& launch() {
  static const Rule rule = [] {
    Rule r;
    r.id = "launch";
    r.question = "Is the kernel as short as a launch?";
    r.expression = "duration";
    r.finding = {
        "launch-overhead",
        "Launch overhead",
        "The kernel runs for a few microseconds, about as long as it takes to launch it, so the "
        "GPU idles between launches.",
        "Batch work into fewer, larger kernels, or capture the launch sequence in a CUDA graph "
        "and replay it.",
        "a kernel at least launch.duration_s long, or launched fewer than launch.min_launches "
        "times",
        {"cuda-graphs"}};
    r.thresholds = {{"launch.duration_s", 10e-6, 0, 3600,
                     "kernel duration (s) below which launch overhead is comparable to the work"}};
    r.needs = {m::duration};
    r.check = check;
    r.verdict = "launch-bound";
    return r;
  }();
  return rule;
}

}  // namespace gpulab::report::walk::rules
