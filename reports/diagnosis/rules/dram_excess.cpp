// The rule "dram-excess" (docs/diagnosis.md): does DRAM move more bytes than the work needs?
#include "reports/diagnosis/rules/rules.hpp"

#include <algorithm>

#include "reports/derived.hpp"
#include "reports/metric_catalogue.hpp"

namespace gpulab::report::walk::rules {
namespace {

namespace m = metrics::name;
namespace d = derived;

// DRAM bytes beyond the work model. When the load over-fetch is measured, the reads it
// explains (whole sectors for partly used data) are the coalescing node's finding, not this
// one's: only the excess beyond it counts here, i.e. data fetched from DRAM more than once.
Outcome check(const Probe& p) {
  const auto ratio = p.metric(d::dram_over_model);
  const auto read_ratio = p.metric(d::dram_read_over_model);
  const auto overfetch = p.metric(d::gld_overfetch);
  const std::string t = "redundant.dram_over_model";
  std::optional<double> excess = ratio;
  if (read_ratio && overfetch && *overfetch > 1) excess = *read_ratio / *overfetch;
  std::vector<Evidence> ev{evidence(d::dram_over_model, ratio),
                           evidence(d::gld_overfetch, overfetch),
                           against(p, "dram_beyond_overfetch", excess, ">=", t)};
  if (!excess) return not_measured(ev);
  if (*excess < p.threshold(t)) return no(ev);
  // Unneeded bytes cost time in proportion to how busy DRAM is: far from its peak, the
  // re-reads are not what the kernel waits for (the naive matmul reads 108x its inputs at 13%).
  const double busy =
      std::min(1.0, p.metric(m::dram_pct).value_or(100.0) / p.threshold("memory_bound.dram_pct"));
  return yes((1.0 - 1.0 / *excess) * busy, ev);
}

}  // namespace

const Rule& dram_excess() {
  static const Rule rule = [] {
    Rule r;
    r.id = "dram-excess";
    r.question = "Does DRAM move more bytes than the work needs?";
    r.expression = "dram_over_model (reads over gld_overfetch when measured)";
    r.finding = {
        "redundant-dram-traffic",
        "DRAM traffic beyond what the work needs",
        "The kernel reads or writes more DRAM bytes than its inputs and outputs hold: data is "
        "re-read from DRAM, or partial sectors cost extra reads and writes.",
        "Reuse data on chip: tile into shared memory or registers so each byte is fetched once, "
        "fuse passes, keep the working set within L2.",
        "DRAM bytes within redundant.dram_over_model of the work model (beyond the load "
        "over-fetch), "
        "or DRAM far from busy",
        {"matmul", "aos-soa", "transpose"}};
    r.thresholds = {
        {"redundant.dram_over_model", 1.5, 0, 1e6,
         "DRAM bytes per byte the work must move (reads beyond the load over-fetch when it is "
         "measured), from which traffic counts as redundant"}};
    r.quantities = {{"dram_beyond_overfetch", metrics::Unit::ratio}};
    r.needs = {m::dram_read, m::dram_write};
    r.check = check;
    return r;
  }();
  return rule;
}

}  // namespace gpulab::report::walk::rules
