// The rule "divergence" (docs/diagnosis.md): do warps diverge?
#include "reports/diagnosis/rules/rules.hpp"

#include <algorithm>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "reports/diagnosis/rules/readings.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/report.hpp"

namespace gpulab::report::walk::rules {
namespace {

namespace m = metrics::name;

// Judged against the lanes a warp can have active at all: a block of 1 thread runs 1-lane warps
// and one of 48 threads averages 24, with no branch taken. The threshold (out of 32 lanes) is
// scaled to them.
Outcome check(const Probe& p) {
  const auto tpi = p.metric(m::threads_per_inst);
  const int block = p.context().kernel->attributes.block_threads;
  const double lanes = block > 0 ? static_cast<double>(block) / ((block + 31) / 32) : 32.0;
  const std::string t = "divergence.threads_per_inst";
  Evidence threshold = against(p, m::threads_per_inst, tpi, "<", t);
  threshold.threshold_value *= lanes / 32.0;
  std::vector<Evidence> ev{threshold, evidence("lanes_per_warp", lanes)};
  if (!tpi) return not_measured(ev);
  return *tpi < threshold.threshold_value ? yes(1.0 - *tpi / lanes, ev) : no(ev);
}

}  // namespace

const Rule& divergence() {
  static const Rule rule = [] {
    Rule r;
    r.id = "divergence";
    r.question = "Do warps diverge?";
    r.expression = "threads_per_inst";
    r.finding = {
        "warp-divergence",
        "Warp divergence",
        "Threads of a warp take different branches, so the warp runs both paths with part of its "
        "lanes masked off.",
        "Make the branch uniform per warp (sort or partition the data), or compute both results "
        "and select without branching.",
        "threads per instruction within divergence.threads_per_inst of the lanes the block size "
        "lets "
        "a warp have",
        {"divergence"}};
    r.thresholds = {
        {"divergence.threads_per_inst", 24, 0, 32,
         "active threads per warp instruction below which divergence counts (32 = none)"}};
    r.quantities = {{"lanes_per_warp", metrics::Unit::ratio}};
    r.needs = {m::threads_per_inst};
    r.check = check;
    // The branches where warps split: what the fix changes. The idle lanes lie on the code
    // that runs after them (in the divergence lab, the inlined paths' lines, not the `if`), so
    // they name the lines only where divergent branches were not counted.
    r.lines = LineMeasure{
        "the divergent branches",
        [](const std::map<std::string, double>& c) {
          return counted(c, source_counter::divergent_branches);
        },
        [](const LineFigures& f) {
          return f.divergent_branches ? fmt::format("{:.0f} branch executions split their warp",
                                                    *f.divergent_branches)
                                      : std::string();
        },
        std::make_shared<const LineMeasure>(LineMeasure{
            "the idle lanes of the warps' instructions",
            [](const std::map<std::string, double>& c) {
              return std::max(0.0, 32 * counted(c, source_counter::inst_executed) -
                                       counted(c, source_counter::thread_inst_executed));
            },
            [](const LineFigures& f) {
              return f.threads_per_instruction
                         ? fmt::format("{:.1f} active threads per instruction",
                                       *f.threads_per_instruction)
                         : std::string();
            }})};
    return r;
  }();
  return rule;
}

}  // namespace gpulab::report::walk::rules
