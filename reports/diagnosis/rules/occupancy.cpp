// The rule "occupancy" (docs/diagnosis.md): is occupancy low?
#include "reports/diagnosis/rules/rules.hpp"

#include "reports/derived.hpp"
#include "reports/diagnosis/rules/readings.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/report.hpp"

namespace gpulab::report::walk::rules {
namespace {

namespace m = metrics::name;
namespace d = derived;

// Few warps matter only when the kernel waits: a kernel that keeps DRAM or an SM pipe near its
// peak with few warps (a register-tiled matrix product, cuBLAS at 12% occupancy) has chosen
// work per thread over thread count, and more warps would not help it.
//
// A grid with fewer blocks than the GPU has SMs leaves SMs with no block at all, which the
// achieved occupancy (an average over the SMs' active cycles) does not see: the warps in use
// over the whole GPU are then the achieved occupancy times the share of SMs with a block. Those
// idle SMs cost their share whatever the busy ones wait on, so the finding ranks before every
// other problem (ncu's launch-statistics rule flags the same grid: fewer blocks than SMs).
Outcome check(const Probe& p) {
  const auto achieved = p.metric(d::achieved_occupancy);
  const auto dram = p.metric(m::dram_pct), sm = p.metric(m::sm_pct);
  const std::string t = "occupancy.achieved";
  const auto& c = p.context();
  const auto& attributes = c.kernel->attributes;
  const int sms = c.device ? c.device->sm_count : 0;
  const bool idle_sms = sms > 0 && attributes.grid_blocks > 0 &&
                        attributes.grid_blocks < static_cast<std::uint64_t>(sms);
  const double sms_with_a_block =
      idle_sms ? static_cast<double>(attributes.grid_blocks) / sms : 1.0;
  const std::optional<double> occupancy =
      achieved ? std::optional<double>(*achieved * sms_with_a_block) : std::nullopt;
  std::vector<Evidence> ev;
  if (idle_sms) {
    ev.push_back(evidence(d::achieved_occupancy, achieved));
    ev.push_back(evidence("sms_with_a_block", sms_with_a_block));
    ev.push_back(against(p, "gpu_occupancy", occupancy, "<=", t));
  } else {
    ev.push_back(against(p, d::achieved_occupancy, achieved, "<=", t));
  }
  ev.push_back(against(p, m::dram_pct, dram, "<", "memory_bound.dram_pct"));
  ev.push_back(against(p, m::sm_pct, sm, "<", "compute_bound.sm_pct"));
  // Known when the driver was asked, or the kernel's resources were recorded: a library kernel
  // whose launch gpulab did not see has none to show.
  if (attributes.theoretical_occupancy > 0)
    ev.push_back(evidence("theoretical_occupancy", attributes.theoretical_occupancy));
  if (!occupancy) return not_measured(ev);
  const bool near_roof = dram.value_or(0) >= p.threshold("memory_bound.dram_pct") ||
                         sm.value_or(0) >= p.threshold("compute_bound.sm_pct");
  if (*occupancy > p.threshold(t) || near_roof) return no(ev);
  Outcome out = yes(1.0 - *occupancy, ev);
  out.detail = occupancy_detail(attributes, c.device, *achieved);
  out.leads = idle_sms;
  return out;
}

}  // namespace

const Rule& occupancy() {
  static const Rule rule = [] {
    Rule r;
    r.id = "occupancy";
    r.question = "Is occupancy low?";
    r.expression = "achieved_occupancy";
    r.finding = {
        "low-occupancy",
        "Low occupancy",
        "Few warps are resident per SM, so there is little other work to switch to when a warp "
        "waits; the limit is the block size, registers, shared memory or the block count.",
        "Use blocks of 128 to 256 threads or more, reduce registers or shared memory per block, "
        "or launch more blocks.",
        "achieved occupancy above occupancy.achieved, or DRAM or the SMs near their peak",
        {"occupancy"}};
    r.thresholds = {{"occupancy.achieved", 0.5, 0, 1,
                     "achieved occupancy (fraction) at or below which it is low"}};
    r.quantities = {{"theoretical_occupancy", metrics::Unit::fraction},
                    {"sms_with_a_block", metrics::Unit::fraction},
                    {"gpu_occupancy", metrics::Unit::fraction}};
    r.needs = {m::warps_active_pct};
    r.check = check;
    r.rank = Rank::cause_of_waiting;
    return r;
  }();
  return rule;
}

}  // namespace gpulab::report::walk::rules
