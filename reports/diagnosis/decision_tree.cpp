// The decision tree of the diagnosis, as data: the root classifies the bottleneck, and each
// class has an ordered list of rules (access pattern, then control flow and synchronization, then
// resource pressure), each declared in its own file (reports/diagnosis/rules/). docs/diagnosis.md
// draws it.
#include <algorithm>

#include "reports/diagnosis/balance.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/diagnosis/diagnosis_walk.hpp"
#include "reports/diagnosis/rules/rules.hpp"
#include "reports/metric_catalogue.hpp"

namespace gpulab::report {
namespace {

using namespace walk;

namespace m = metrics::name;

// The branches of the root, with the rules each visits in order.
struct Branch {
  const char* name;     // answer of the root node
  const char* verdict;  // overall verdict for this branch
  std::vector<const Rule*> checks;
};

const std::vector<Branch>& branches() {
  using namespace rules;
  static const std::vector<Branch> b = {
      {"memory",
       "memory-bound",
       {&coalescing(), &dram_excess(), &local_memory(), &shared_banks(), &atomics(), &occupancy(),
        &tail(), &at_roof(), &below_roof()}},
      {"compute",
       "compute-bound",
       {&coalescing(), &dram_excess(), &shared_banks(), &local_memory(), &atomics(), &divergence(),
        &mio(), &sync(), &latency(), &occupancy(), &tail(), &compute_roof()}},
      {"neither",
       "latency-bound",
       {&coalescing(), &dram_excess(), &shared_banks(), &local_memory(), &atomics(), &divergence(),
        &mio(), &sync(), &latency(), &occupancy(), &tail(), &launch()}},
  };
  return b;
}

// The root: which throughput is near its peak.
const Branch& classify(const Probe& p, PathStep& step) {
  const auto dram = p.metric(m::dram_pct), sm = p.metric(m::sm_pct);
  step.node = "bottleneck";
  step.depth = 0;
  step.question = "What limits the kernel: DRAM bandwidth, SM throughput, or neither?";
  step.expression = "dram_pct vs memory_bound.dram_pct; sm_pct vs compute_bound.sm_pct";
  step.evidence = {against(p, m::dram_pct, dram, ">=", "memory_bound.dram_pct"),
                   against(p, m::sm_pct, sm, ">=", "compute_bound.sm_pct")};
  const auto& b = branches();
  const bool memory = dram && *dram >= p.threshold("memory_bound.dram_pct");
  const bool compute = sm && *sm >= p.threshold("compute_bound.sm_pct");
  const Branch* branch = &b[2];
  if (memory && (!compute || *dram >= *sm))
    branch = &b[0];
  else if (compute)
    branch = &b[1];
  step.answer = (dram || sm) ? branch->name : "not measured";
  return *branch;
}

// A kernel shorter than a launch, launched a few times, costs microseconds whatever limits it:
// the tree would only find the symptoms of its size (one thread is a "divergent" warp, one block
// a partial wave). Such a kernel is one step and no finding; launched often, it is walked.
bool too_little_work(const Probe& p, Diagnosis& out) {
  const auto ns = p.metric(m::duration);
  if (!ns) return false;
  const double seconds = *ns * 1e-9;
  const auto launches = static_cast<double>(p.context().launches);
  const bool little =
      seconds < p.threshold("launch.duration_s") && launches < p.threshold("launch.min_launches");
  if (!little) return false;
  PathStep step;
  step.node = "work";
  step.question = "Is there enough work to diagnose?";
  step.expression = "duration vs launch.duration_s; launches vs launch.min_launches";
  step.evidence = {against(p, "duration_s", seconds, "<", "launch.duration_s"),
                   against(p, "launches", launches, "<", "launch.min_launches")};
  step.answer = "no";
  out.path.push_back(std::move(step));
  out.verdict = "too-little-work";
  return true;
}

}  // namespace

namespace walk {

const Walk& kernel_walk() {
  static const Walk w = [] {
    Walk out;
    out.thresholds = {
        {"diagnosis.min_severity", 0.1, 0, 1,
         "severity (the share of time a problem plausibly costs) below which a yes is reported as "
         "negligible instead of as a finding"},
        {"diagnosis.max_findings", 3, 1, 100,
         "findings a kernel reports at most, by rank; a problem ranked after them answers "
         "\"yes, ranked out\" on the path"},
        {"diagnosis.min_time_share", 0.02, 0, 1,
         "share of its variant's (or program's) GPU time below which a kernel function is "
         "summarized instead of diagnosed (--kernel diagnoses it anyway)"},
        {"memory_bound.dram_pct", 60, 0, 100,
         "DRAM throughput, % of peak, from which the kernel counts as memory-bound"},
        {"compute_bound.sm_pct", 60, 0, 100,
         "SM throughput, % of peak, from which the kernel counts as compute-bound"},
        {"compute_bound.at_roof_sm_pct", 80, 0, 100,
         "SM throughput, % of peak, from which compute-bound leads over findings whose gain only "
         "the SM's headroom bounds (barrier waits)"},
        {"launch.min_launches", 10, 1, 1e12,
         "launches of a kernel function from which a kernel shorter than launch.duration_s is "
         "diagnosed (launch overhead among others); fewer: too little work to diagnose"},
    };
    out.quantities = {{"duration_s", metrics::Unit::seconds}, {"launches", metrics::Unit::count}};
    for (const auto& branch : branches())
      for (const Rule* rule : branch.checks)
        if (std::find(out.rules.begin(), out.rules.end(), rule) == out.rules.end())
          out.rules.push_back(rule);
    return out;
  }();
  return w;
}

}  // namespace walk

const std::vector<RuleInfo>& kernel_rules() {
  static const std::vector<RuleInfo> rules = [] {
    std::vector<RuleInfo> out;
    for (const walk::Rule* rule : walk::kernel_walk().rules) {
      out.push_back(walk::describe(*rule, "kernel"));
      for (const auto& branch : branches())
        if (std::find(branch.checks.begin(), branch.checks.end(), rule) != branch.checks.end())
          out.back().branches.emplace_back(branch.name);
    }
    return out;
  }();
  return rules;
}

std::string node_of_finding(const std::string& finding) {
  for (const walk::Rule* rule : walk::kernel_walk().rules)
    if (finding == rule->finding.id) return rule->id;
  return "";
}

Diagnosis diagnose(const KernelContext& context, const Thresholds& thresholds) {
  const Probe probe(context, thresholds);
  Diagnosis out;
  out.thresholds_overridden = thresholds.overridden();

  if (too_little_work(probe, out)) return out;

  PathStep root;
  const Branch& branch = classify(probe, root);
  out.path.push_back(root);
  out.verdict = branch.verdict;
  const auto dram = probe.metric(m::dram_pct);
  if (dram && context.device && std::string(branch.name) != "memory")
    if (auto caveat = memory_balance_caveat(*context.device, *dram, probe.metric(m::sm_pct),
                                            thresholds["memory_bound.dram_pct"]))
      out.caveats.push_back(std::move(*caveat));

  // At the compute roof, what only the SM's headroom bounds does not lead: a warp-specialized
  // GEMM at 88% of the SM peak waits at barriers by design (its producer warps), and waiting
  // less would at most close the 12% left, so the roof is what limits it. Below the roof the
  // same cap still lets barrier waits lead (the reduction lab's interleaved trees, at 68-73%,
  // run 4.6x faster without them).
  bool only_bounded = true;
  walk::Findings findings;
  for (const Rule* rule : branch.checks) {
    const Outcome outcome = rule->check(probe);
    const bool found = findings.record(out, *rule, outcome, thresholds["diagnosis.min_severity"]);
    if (outcome.answer == Answer::not_measured)
      for (const char* need : rule->needs)
        if (!probe.metric(need)) out.path.back().missing.emplace_back(need);
    const bool problem = found && !is_standing(*rule);
    if (problem && !outcome.bounded_by_headroom) only_bounded = false;
  }
  const auto sm = probe.metric(m::sm_pct);
  findings.rank_into(out, only_bounded && sm && *sm >= thresholds["compute_bound.at_roof_sm_pct"],
                     static_cast<std::size_t>(thresholds["diagnosis.max_findings"]));
  return out;
}

}  // namespace gpulab::report
