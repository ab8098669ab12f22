// The rule "tail" (docs/diagnosis.md): does a partial last wave leave SMs idle?
#include "reports/diagnosis/rules/rules.hpp"

#include "reports/diagnosis/rules/readings.hpp"
#include "reports/metric_catalogue.hpp"

namespace gpulab::report::walk::rules {
namespace {

namespace m = metrics::name;

// A tail exists only past the first wave: a grid of one wave or less idles SMs because it is
// small, which the occupancy node names (its limiter is the grid).
Outcome check(const Probe& p) {
  const auto w = waves_of(p.context());
  if (!w) return not_measured({evidence("waves", std::nullopt)});
  const double waves = *w, idle = idle_last_wave(waves);
  // The waves are held against the bound they come near: the lower one for a small grid.
  const bool small = waves <= p.threshold("tail.min_waves");
  std::vector<Evidence> ev{small ? against(p, "waves", waves, ">", "tail.min_waves")
                                 : against(p, "waves", waves, "<=", "tail.max_waves"),
                           against(p, "idle_fraction_last_wave", idle, ">=", "tail.idle_fraction")};
  if (small || waves > p.threshold("tail.max_waves") || idle < p.threshold("tail.idle_fraction"))
    return no(ev);
  return yes(idle, ev);
}

}  // namespace

const Rule& tail() {
  static const Rule rule = [] {
    Rule r;
    r.id = "tail";
    r.question = "Does a partial last wave leave SMs idle?";
    r.expression = "grid_blocks / (SMs x blocks per SM)";
    r.finding = {
        "tail-effect",
        "Tail effect: a partial last wave",
        "The grid is a few waves of blocks and the last one is partial: most SMs idle while a few "
        "finish it.",
        "Size the grid as a multiple of the SMs' capacity, or use a grid-stride loop over a grid "
        "of (number of SMs x blocks per SM) blocks.",
        "a grid of one wave or less, more than tail.max_waves waves, or a last wave that leaves "
        "under "
        "tail.idle_fraction of the SMs idle",
        {"occupancy"}};
    r.thresholds = {
        {"tail.min_waves", 1, 0, 1e6,
         "waves a grid must exceed to have a tail: a smaller grid leaves SMs idle because it is "
         "small (the occupancy node names it), not because its last wave is partial"},
        {"tail.max_waves", 4, 0, 1e6,
         "tail effects are judged only for grids of at most this many waves"},
        {"tail.idle_fraction", 0.25, 0, 1,
         "share of SM time the partial last wave leaves idle, from which the tail counts"}};
    r.quantities = {{"waves", metrics::Unit::ratio},
                    {"idle_fraction_last_wave", metrics::Unit::fraction}};
    r.check = check;
    // Not calibrated: no lab pair yet (docs/estimates.md).
    r.estimate_model = "tail";
    return r;
  }();
  return rule;
}

}  // namespace gpulab::report::walk::rules
