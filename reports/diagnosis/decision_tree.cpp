// The decision tree of the diagnosis, as data: the root classifies the bottleneck, and each
// class has an ordered list of check nodes (access pattern, then control flow and
// synchronization, then resource pressure). docs/diagnosis.md draws it.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "reports/derived.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/diagnosis/diagnosis_walk.hpp"
#include "reports/diagnosis/occupancy_limit.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/report.hpp"
#include "reports/units.hpp"

namespace gpulab::report {
namespace {

using namespace walk;

namespace m = metrics::name;
namespace d = derived;

class Probe {
 public:
  Probe(const KernelContext& c, const Thresholds& t) : c_(c), t_(t) {}

  // A raw or derived metric of the kernel.
  std::optional<double> metric(const std::string& name) const {
    const auto& k = *c_.kernel;
    if (auto it = k.metrics.find(name); it != k.metrics.end()) return it->second;
    if (auto it = k.derived.find(name); it != k.derived.end()) return it->second;
    return std::nullopt;
  }
  double threshold(const std::string& name) const { return t_[name]; }
  const KernelContext& context() const { return c_; }

 private:
  const KernelContext& c_;
  const Thresholds& t_;
};

Evidence against(const Probe& p, const std::string& metric, std::optional<double> value,
                 const std::string& relation, const std::string& threshold) {
  return evidence(metric, value, relation, threshold, p.threshold(threshold));
}

// ---- check nodes ------------------------------------------------------------------------------

// With the instrumented byte counts, the over-fetch factor judges any access width (a float4
// load moves 16 sectors per request and wastes nothing). Without them, sectors per request
// against the 4-byte ideal is the fallback, which over-flags 8- and 16-byte accesses.
// Loads and stores are weighed by their traffic (global_overfetch), so that a kernel whose
// only scattered accesses are a few single-thread stores is not flagged. Where the L1 hit rate
// is measured, the bytes that went past L1 decide: sectors a load moved but L1 then served to
// the next lane or instruction cost nothing beyond L1 (a table every warp reads, a dot product
// reading two interleaved vectors: docs/diagnosis.md).
Outcome coalescing(const Probe& p) {
  const auto all = p.metric(d::global_overfetch);
  if (all) {
    const std::string t = "uncoalesced.overfetch";
    const auto past_l1 = p.metric(d::global_overfetch_past_l1);
    const double judged = past_l1.value_or(*all);
    // Each direction is judged on its own pattern: a strided load stays uncoalesced however
    // coalesced the stores beside it are (PyTorch's strided-slice copy: loads 2.0, stores 1.0,
    // 1.5 combined). Loads are judged past L1 where its hit rate is measured (the sectors L1
    // served again cost no L2 or DRAM byte); a store goes past L1 whatever the rate.
    const auto ld = p.metric(d::gld_overfetch), st = p.metric(d::gst_overfetch);
    const auto hit = p.metric(m::l1_hit_pct);
    std::optional<double> worst;
    if (ld) worst = hit ? *ld * (1.0 - *hit / 100) : *ld;
    if (st) worst = std::max(worst.value_or(0), *st);
    std::vector<Evidence> ev{evidence(d::gld_overfetch, ld), evidence(d::gst_overfetch, st),
                             evidence(d::global_overfetch, all)};
    if (past_l1) ev.push_back(evidence(d::global_overfetch_past_l1, past_l1));
    ev.push_back(against(p, "worst_direction_overfetch", worst, ">=", t));
    if (!worst || *worst < p.threshold(t)) return no(ev);
    // The cost is the share of all moved bytes nobody asked for, scaled by how much of the
    // kernel's traffic the instrumented directions cover: a kernel that loads with cp.async or
    // TMA (no LDG to count) and stores one word per row has a high store over-fetch on almost
    // no bytes, and so has a reduction's one partial sum per block (8x on a few kilobytes).
    double covered = 0, total = 0;
    for (const auto& [sectors, bytes] : {std::pair{m::gld_sectors, m::gld_bytes_requested},
                                         std::pair{m::gst_sectors, m::gst_bytes_requested}}) {
      const double moved = 32.0 * p.metric(sectors).value_or(0);
      total += moved;
      if (p.metric(bytes).value_or(0) > 0) covered += moved;
    }
    total = std::max(total, p.metric(d::dram_bytes).value_or(0));
    return yes(std::max(0.0, 1.0 - 1.0 / judged) * (total > 0 ? covered / total : 1.0), ev);
  }
  const auto ld_spr = p.metric(d::gld_sectors_per_request);
  const auto st_spr = p.metric(d::gst_sectors_per_request);
  const std::string t = "uncoalesced.sectors_per_request";
  std::vector<Evidence> ev{against(p, d::gld_sectors_per_request, ld_spr, ">=", t),
                           against(p, d::gst_sectors_per_request, st_spr, ">=", t)};
  if (!ld_spr && !st_spr) return not_measured(ev);
  const double worst = std::max(ld_spr.value_or(0), st_spr.value_or(0));
  if (worst < p.threshold(t)) return no(ev);
  return yes(1.0 - 4.0 / worst, ev);  // share of moved sectors a 4-byte-coalesced access avoids
}

// DRAM bytes beyond the work model. When the load over-fetch is measured, the reads it
// explains (whole sectors for partly used data) are the coalescing node's finding, not this
// one's: only the excess beyond it counts here, i.e. data fetched from DRAM more than once.
Outcome dram_excess(const Probe& p) {
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

// Where a memory-bound kernel stands against the measured copy roof. One reading for the at-roof
// and below-roof nodes, so that the two judge the same fraction against the same threshold: with
// a work model, the effective bandwidth (the model's bytes over the time) and whether DRAM moved
// about those bytes; without one, the DRAM bandwidth over the copy roof (dram_pct is DRAM bytes
// per second over the theoretical bandwidth), whose bytes cannot be judged. A report without
// measured roofs holds dram_pct to at_roof.dram_pct, the same fraction of a typical copy roof.
struct RoofStanding {
  std::vector<Evidence> evidence;
  std::optional<double> fraction;  // of the copy roof
  bool minimal = true;             // DRAM bytes within at_roof.dram_over_model of the model
};

RoofStanding roof_standing(const Probe& p) {
  const auto& c = p.context();
  const auto ratio = p.metric(d::dram_over_model);
  RoofStanding s;
  if (ratio && c.variant && c.variant->roof_fraction > 0) {
    s.fraction = c.variant->roof_fraction;
    s.minimal = *ratio <= p.threshold("at_roof.dram_over_model");
    s.evidence = {against(p, d::dram_over_model, ratio, "<=", "at_roof.dram_over_model"),
                  against(p, "roof_fraction", s.fraction, ">=", "at_roof.roof_fraction")};
    return s;
  }
  const auto pct = p.metric(m::dram_pct);
  const Roofs* roofs = c.device ? &c.device->roofs : nullptr;
  if (roofs && roofs->copy_bandwidth > 0 && roofs->theoretical_bandwidth > 0) {
    if (pct) s.fraction = *pct / 100 * roofs->theoretical_bandwidth / roofs->copy_bandwidth;
    s.evidence = {evidence(m::dram_pct, pct),
                  against(p, "dram_over_copy_roof", s.fraction, ">=", "at_roof.roof_fraction")};
    return s;
  }
  const double at = p.threshold("at_roof.dram_pct");
  if (pct && at > 0) s.fraction = *pct / at * p.threshold("at_roof.roof_fraction");
  s.evidence = {against(p, m::dram_pct, pct, ">=", "at_roof.dram_pct")};
  return s;
}

bool near_roof(const Probe& p, const RoofStanding& s) {
  return s.fraction && *s.fraction >= p.threshold("at_roof.roof_fraction");
}

Outcome at_roof(const Probe& p) {
  const auto s = roof_standing(p);
  if (!s.fraction) return not_measured(s.evidence);
  return s.minimal && near_roof(p, s) ? yes(0, s.evidence) : no(s.evidence);
}

// A stall reason's cycles over those of every reason; empty when either is missing.
std::optional<double> stall_fraction(const Probe& p, const char* reason) {
  const auto part = p.metric(reason), total = p.metric(m::warp_latency);
  if (part && total && *total > 0) return *part / *total;
  return std::nullopt;
}

// Bank conflicts cost time only where warps wait on the shared-memory pipe: for its queue
// (mio_throttle) or for its results (short_scoreboard). Where the stall reasons are measured,
// that share of the warps' cycles must reach shared_banks.stall_share and bounds the severity:
// CUB's histogram sweep has 2.6 excess wavefronts per shared atomic and waits on shared memory
// 12% of its cycles (the per-sample arithmetic sets its time), and the lab's interleaved
// reduction runs faster with its conflicts than its padded variant without them
// (docs/diagnosis.md).
Outcome shared_banks(const Probe& p) {
  const auto excess = p.metric(d::shared_excess_wavefronts);
  const auto ld = p.metric(m::shld_inst), st = p.metric(m::shst_inst);
  const double atomics = p.metric(m::shatom_inst).value_or(0);  // the full set only
  const std::string t = "shared_banks.excess_per_inst";
  std::optional<double> per_inst;
  if (excess && ld && st && *ld + *st + atomics > 0) per_inst = *excess / (*ld + *st + atomics);
  std::vector<Evidence> ev{
      evidence(d::shld_wavefronts_per_inst, p.metric(d::shld_wavefronts_per_inst)),
      evidence(d::shared_excess_wavefronts, excess),
      against(p, "excess_wavefronts_per_inst", per_inst, ">=", t)};
  if (!excess || !ld || !st) return not_measured(ev);
  if (!per_inst || *per_inst < p.threshold(t)) return no(ev);
  double severity = *per_inst / (*per_inst + 1.0);  // share of wavefronts that are excess
  const auto queue = stall_fraction(p, m::stall_mio_throttle);
  const auto results = stall_fraction(p, m::stall_short_scoreboard);
  if (queue && results) {  // the stall reasons are measured (the stalls and full sets)
    const double waiting = *queue + *results;
    ev.push_back(against(p, "shared_wait_share", waiting, ">=", "shared_banks.stall_share"));
    if (waiting < p.threshold("shared_banks.stall_share")) return no(ev);
    severity = std::min(severity, waiting);
  }
  return yes(severity, ev);
}

// Bytes TMA and bulk copies move between global and shared memory, which no LSU request or
// sector counter sees, estimated from L2's byte count: what L2 carried beyond kL2CountPerByte
// times the LSU's global sectors, the local bytes (their misses are at most all of them) and
// 1,024 bytes per atomic request (every lane at its own sector, the most one can move). GH100's
// split L2 counts a byte once or twice: over the H200 fixtures, L2 bytes are 0.01-2.5 times
// those LSU bytes on every kernel that moves more than a megabyte without TMA, and 770-24,600
// times on the TMA kernels (cuBLAS's TF32 GEMM: 32 LSU bytes, 2.3 GB through L2; the async-copy
// lab's bulk copy), so the factor errs low on the one and hardly matters on the other. Empty
// without the L2 count (it is not in the basic set).
constexpr double kL2CountPerByte = 3;

std::optional<double> tma_bytes(const Probe& p) {
  const auto l2 = p.metric(m::l2_bytes), ld = p.metric(m::gld_sectors),
             st = p.metric(m::gst_sectors), local = p.metric(d::local_bytes),
             atom = p.metric(m::atom_requests), red = p.metric(m::red_requests);
  if (!l2 || !ld || !st || !local || !atom || !red) return std::nullopt;
  const double counted = 32.0 * (*ld + *st) + *local + 1024.0 * (*atom + *red);
  return std::max(0.0, *l2 - kL2CountPerByte * counted);
}

Outcome local_memory(const Probe& p) {
  const auto local = p.metric(d::local_bytes);
  const auto ld = p.metric(m::gld_sectors), st = p.metric(m::gst_sectors);
  const auto tma = tma_bytes(p);
  const std::string t = "local.fraction";
  std::optional<double> fraction;
  if (local && ld && st) {
    const double global = 32.0 * (*ld + *st) + tma.value_or(0);
    fraction = global > 0 ? *local / global : (*local > 0 ? 1.0 : 0.0);
  }
  std::vector<Evidence> ev{evidence(d::local_bytes, local), evidence("tma_bytes", tma),
                           against(p, "local_over_global_bytes", fraction, ">=", t)};
  if (!fraction) return not_measured(ev);
  if (*fraction < p.threshold(t)) return no(ev);
  return yes(*fraction / (*fraction + 1.0), ev);
}

// Does one stall reason take a large share of the warps' time? Its cycles per issued
// instruction over those of every reason (warp_latency), against `threshold`; the share is the
// severity. One builder for the latency, sync and mio nodes, so they weigh alike and show the
// same evidence.
//
// With `up_to_headroom`, the severity is at most the SM's headroom: with its busiest unit at
// sm_pct of its peak, a kernel can run at most 1 - sm_pct/100 faster without taking work from
// that unit, and waiting less at barriers takes none (a warp-specialized GEMM at 88% of the SM
// peak has half its warps' cycles at barriers by design). Not for waits on a unit's own queue
// or results: there the busiest unit may be the one waited on (the constant cache of a
// divergent __constant__ index: MIO throttle 97% of the cycles at sm_pct 99.9%).
std::function<Outcome(const Probe&)> stall_share(const char* reason, const char* share_name,
                                                 const char* threshold,
                                                 bool up_to_headroom = false) {
  return [=](const Probe& p) {
    const auto share = stall_fraction(p, reason);
    std::vector<Evidence> ev{evidence(reason, p.metric(reason)),
                             evidence(m::warp_latency, p.metric(m::warp_latency)),
                             against(p, share_name, share, ">=", threshold)};
    if (!share) return not_measured(ev);
    if (*share < p.threshold(threshold)) return no(ev);
    double severity = *share;
    const auto sm = p.metric(m::sm_pct);
    const bool bounded = up_to_headroom && sm && 1.0 - *sm / 100 < severity;
    if (bounded) {
      severity = 1.0 - *sm / 100;
      ev.push_back(evidence(m::sm_pct, sm));
    }
    Outcome out = yes(severity, ev);
    out.bounded_by_headroom = bounded;
    return out;
  };
}

// Which resource holds occupancy down (reports/diagnosis/occupancy_limit.hpp), or, when no static
// limit does, that the blocks themselves leave the warp slots empty.
std::string occupancy_detail(const StaticAttributes& a, const DeviceInfo* device, double achieved) {
  const auto limit = device ? occupancy_limit(a, *device) : std::nullopt;
  if (!limit) return "";
  if (limit->limiter == OccupancyLimiter::grid)
    return fmt::format("limited by {} ({} of the GPU's warp slots at most)", limit->sentence,
                       units::percent(limit->theoretical));
  if (limit->warps_per_sm >= limit->max_warps_per_sm)
    return fmt::format(
        "no static limit: {} resident blocks per SM fill its {} warps, yet {:.0f}% of them are "
        "busy on average: blocks finish unevenly, or too few are launched to refill the SMs",
        limit->blocks_per_sm, limit->max_warps_per_sm, 100 * achieved);
  return fmt::format("limited by {} ({} of {} warps, {:.0f}% theoretical)", limit->sentence,
                     limit->warps_per_sm, limit->max_warps_per_sm, 100 * limit->theoretical);
}

// Few warps matter only when the kernel waits: a kernel that keeps DRAM or an SM pipe near its
// peak with few warps (a register-tiled matrix product, cuBLAS at 12% occupancy) has chosen
// work per thread over thread count, and more warps would not help it.
Outcome occupancy(const Probe& p) {
  const auto achieved = p.metric(d::achieved_occupancy);
  const auto dram = p.metric(m::dram_pct), sm = p.metric(m::sm_pct);
  const std::string t = "occupancy.achieved";
  const auto& c = p.context();
  const auto& attributes = c.kernel->attributes;
  std::vector<Evidence> ev{against(p, d::achieved_occupancy, achieved, "<=", t),
                           against(p, m::dram_pct, dram, "<", "memory_bound.dram_pct"),
                           against(p, m::sm_pct, sm, "<", "compute_bound.sm_pct")};
  // Known when the driver was asked, or the kernel's resources were recorded: a library kernel
  // whose launch gpulab did not see has none to show.
  if (attributes.theoretical_occupancy > 0)
    ev.push_back(evidence("theoretical_occupancy", attributes.theoretical_occupancy));
  if (!achieved) return not_measured(ev);
  const bool near_roof = dram.value_or(0) >= p.threshold("memory_bound.dram_pct") ||
                         sm.value_or(0) >= p.threshold("compute_bound.sm_pct");
  if (*achieved > p.threshold(t) || near_roof) return no(ev);
  Outcome out = yes(1.0 - *achieved, ev);
  out.detail = occupancy_detail(attributes, c.device, *achieved);
  return out;
}

// Grid blocks over what the SMs hold at once; empty when the device or the attributes are unknown.
std::optional<double> waves_of(const KernelContext& c) {
  const auto& a = c.kernel->attributes;
  if (!c.device || c.device->sm_count <= 0 || a.max_active_blocks_per_sm <= 0 || a.grid_blocks == 0)
    return std::nullopt;
  const double per_wave = static_cast<double>(c.device->sm_count) * a.max_active_blocks_per_sm;
  return static_cast<double>(a.grid_blocks) / per_wave;
}

// The share of SM time a partial last wave leaves idle.
double idle_last_wave(double waves) { return (std::ceil(waves) - waves) / std::ceil(waves); }

// A tail exists only past the first wave: a grid of one wave or less idles SMs because it is
// small, which the occupancy node names (its limiter is the grid).
Outcome tail(const Probe& p) {
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

// What keeps a memory-bound kernel with minimal bytes off the roof, from the counters at hand.
// By Little's law an SM sustains its share of the roof only with latency x bandwidth / SMs bytes
// outstanding, and four things hold fewer in flight: few resident warps, a partial last wave,
// barriers between load phases and too few or too narrow loads per warp. The first two are
// judged against the occupancy and tail thresholds; otherwise the bytes in flight are named,
// with the stall shares that say where the warps' time goes.
std::string roof_gap(const Probe& p, std::optional<double> achieved, std::optional<double> waves,
                     std::optional<double> memory_wait, std::optional<double> barrier_wait,
                     std::optional<double> bytes_per_request) {
  const auto& c = p.context();
  if (achieved && *achieved <= p.threshold("occupancy.achieved")) {
    const std::string limit = occupancy_detail(c.kernel->attributes, c.device, *achieved);
    return fmt::format("too few warps to keep bytes in flight: {:.0f}% achieved occupancy{}",
                       100 * *achieved, limit.empty() ? "" : ", " + limit);
  }
  if (waves && *waves > p.threshold("tail.min_waves") && *waves <= p.threshold("tail.max_waves") &&
      idle_last_wave(*waves) >= p.threshold("tail.idle_fraction"))
    return fmt::format("a partial last wave: {:.2f} waves leave {:.0f}% of the SMs' time idle",
                       *waves, 100 * idle_last_wave(*waves));
  std::string out = "too few bytes in flight per SM";
  if (bytes_per_request)
    out += fmt::format(" ({:.0f} B per global load request, {:.0f} B per thread)",
                       *bytes_per_request, *bytes_per_request / 32);
  if (memory_wait || barrier_wait) {
    out += ": warps wait";
    if (memory_wait) out += fmt::format(" on memory results {:.0f}%", 100 * *memory_wait);
    if (memory_wait && barrier_wait) out += " and";
    if (barrier_wait) out += fmt::format(" at barriers {:.0f}%", 100 * *barrier_wait);
    out += " of their cycles";
  }
  if (achieved) out += fmt::format(", with {:.0f}% achieved occupancy", 100 * *achieved);
  return out;
}

// The complement of at-roof on the bandwidth axis: bytes as minimal (or no model to judge them),
// DRAM the busiest unit (the memory branch), and the bandwidth under at_roof.roof_fraction of the
// copy roof. The severity is the share of the time the gap to the roof costs, 1 - fraction.
Outcome below_roof(const Probe& p) {
  const auto s = roof_standing(p);
  const auto& c = p.context();
  const auto achieved = p.metric(d::achieved_occupancy);
  const auto waves = waves_of(c);
  const auto memory_wait = stall_fraction(p, m::stall_long_scoreboard);
  const auto barrier_wait = stall_fraction(p, m::stall_barrier);
  std::optional<double> bytes_per_request;
  const auto bytes = p.metric(m::gld_bytes_requested), requests = p.metric(m::gld_requests);
  if (bytes && requests && *requests > 0) bytes_per_request = *bytes / *requests;
  std::vector<Evidence> ev = s.evidence;
  ev.push_back(evidence(d::achieved_occupancy, achieved));
  ev.push_back(evidence("waves", waves));
  ev.push_back(evidence("long_scoreboard_share", memory_wait));
  ev.push_back(evidence("barrier_share", barrier_wait));
  ev.push_back(evidence("load_bytes_per_request", bytes_per_request));
  if (!s.fraction) return not_measured(ev);
  if (!s.minimal || near_roof(p, s)) return no(ev);
  Outcome out = yes(1.0 - *s.fraction, ev);
  out.detail = roof_gap(p, achieved, waves, memory_wait, barrier_wait, bytes_per_request);
  return out;
}

Outcome launch(const Probe& p) {
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

// Judged against the lanes a warp can have active at all: a block of 1 thread runs 1-lane warps
// and one of 48 threads averages 24, with no branch taken. The threshold (out of 32 lanes) is
// scaled to them.
Outcome divergence(const Probe& p) {
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

// Contention is serialization where the updates land: the atomic unit of the L2 slice that holds
// a contended address is busy while the other slices' are not. Where that is measured, the
// busiest slice's share of the elapsed time is the answer and the cost; otherwise the number of
// atomics per load request stands in for it (frequent atomics, contended or not).
Outcome atomics(const Probe& p) {
  const auto atom = p.metric(m::atom_requests), red = p.metric(m::red_requests);
  const auto loads = p.metric(m::gld_requests);
  const auto busiest = p.metric(m::l2_atomic_busiest_pct);
  const auto tma = tma_bytes(p);
  std::optional<double> ratio;
  // TMA loads count as the 128-byte requests that would move their bytes.
  if (atom && red && loads)
    ratio = (*atom + *red) / std::max(*loads + tma.value_or(0) / 128.0, 1.0);
  std::vector<Evidence> ev{evidence(m::atom_requests, atom), evidence(m::red_requests, red)};
  if (busiest) {
    const std::string t = "atomics.l2_slice_busy_pct";
    ev.push_back(evidence(m::l2_atomic_pct, p.metric(m::l2_atomic_pct)));
    ev.push_back(against(p, m::l2_atomic_busiest_pct, busiest, ">=", t));
    return *busiest >= p.threshold(t) ? yes(*busiest / 100.0, ev) : no(ev);
  }
  const std::string t = "atomics.per_load_request";
  ev.push_back(evidence("tma_bytes", tma));
  ev.push_back(against(p, "atomics_per_load_request", ratio, ">=", t));
  if (!ratio) return not_measured(ev);
  return *ratio >= p.threshold(t) ? yes(*ratio / (*ratio + 1.0), ev) : no(ev);
}

Outcome compute(const Probe& p) {
  const auto pct = p.metric(m::sm_pct);
  std::vector<Evidence> ev{against(p, m::sm_pct, pct, ">=", "compute_bound.sm_pct")};
  if (!pct) return not_measured(ev);
  return *pct >= p.threshold("compute_bound.sm_pct") ? yes(0, ev) : no(ev);
}

// How a node's finding ranks beside the others of its walk, beyond its score.
enum class Rank {
  by_score,
  // Waiting on memory (latency-bound) is the symptom; too few resident warps to hide the wait,
  // loads that each wait on more sectors than they use, spills that turn registers into memory
  // loads, and atomics that queue at one L2 slice ahead of the loads are its causes. Found
  // beside it, a cause ranks first: it names the change that shortens or hides the wait, which
  // "latency-bound" alone does not.
  cause_of_waiting,
  waiting,
  // The memory branch's other problems (uncoalesced or redundant traffic, bank conflicts, a
  // tail) are reasons a kernel is below the roof: named, they rank first, and this finding says
  // what the counters show beyond them.
  after_problems,
};

struct CheckNode {
  NodeInfo info;
  std::function<Outcome(const Probe&)> evaluate;
  // The counters without which it answers "not measured" (the inputs of the derived metrics it
  // reads): a report without them names the node and the metric set that measures them.
  std::vector<const char*> needs;
  Rank rank = Rank::by_score;
  const char* verdict = nullptr;  // the kernel's verdict when this node's finding is principal
};

const CheckNode kCoalescing{{"coalescing", "Do global accesses move more bytes than they use?",
                             "global_overfetch_past_l1 (and global_overfetch), else "
                             "max(sectors per request)",
                             "uncoalesced-global"},
                            coalescing,
                            {m::gld_sectors, m::gld_requests, m::gst_sectors, m::gst_requests},
                            Rank::cause_of_waiting};
const CheckNode kDramExcess{
    {"dram-excess", "Does DRAM move more bytes than the work needs?",
     "dram_over_model (reads over gld_overfetch when measured)", "redundant-dram-traffic"},
    dram_excess,
    {m::dram_read, m::dram_write}};
const CheckNode kAtRoof{{"at-roof", "Are the bytes minimal and the bandwidth near the roof?",
                         "dram_over_model and roof_fraction (else dram_pct over the copy roof)",
                         "memory-bound-at-roof", kStandingScore},
                        at_roof,
                        {m::dram_read, m::dram_write, m::dram_pct}};
const CheckNode kBelowRoof{
    {"below-roof", "Are the bytes minimal but the bandwidth short of the roof?",
     "dram_over_model and roof_fraction (else dram_pct over the copy roof)",
     "memory-bound-below-roof"},
    below_roof,
    {m::dram_read, m::dram_write, m::dram_pct},
    Rank::after_problems};
const CheckNode kSharedBanks{{"shared-banks", "Do shared-memory accesses conflict on banks?",
                              "shared_excess_wavefronts / (shld_inst + shst_inst + shatom_inst); "
                              "(stall_mio_throttle + stall_short_scoreboard) / warp_latency",
                              "shared-bank-conflicts"},
                             shared_banks,
                             {m::shld_wavefronts, m::shst_wavefronts, m::shld_inst, m::shst_inst}};
const CheckNode kLocal{{"local", "Is there local-memory traffic (spills, local arrays)?",
                        "local_bytes / (32 x (gld_sectors + gst_sectors))", "local-memory"},
                       local_memory,
                       {m::local_ld_bytes, m::local_st_bytes, m::gld_sectors, m::gst_sectors},
                       Rank::cause_of_waiting};
const CheckNode kLatency{
    {"latency", "Do warps mostly wait on global/local memory results?",
     "stall_long_scoreboard / warp_latency", "latency-bound"},
    stall_share(m::stall_long_scoreboard, "long_scoreboard_share", "latency.long_scoreboard_share"),
    {m::stall_long_scoreboard, m::warp_latency},
    Rank::waiting,
    "latency-bound"};
const CheckNode kOccupancy{
    {"occupancy", "Is occupancy low?", "achieved_occupancy", "low-occupancy"},
    occupancy,
    {m::warps_active_pct},
    Rank::cause_of_waiting};
const CheckNode kTail{{"tail", "Does a partial last wave leave SMs idle?",
                       "grid_blocks / (SMs x blocks per SM)", "tail-effect"},
                      tail,
                      {}};
const CheckNode kLaunch{
    {"launch", "Is the kernel as short as a launch?", "duration", "launch-overhead"},
    launch,
    {m::duration},
    Rank::by_score,
    "launch-bound"};
const CheckNode kDivergence{
    {"divergence", "Do warps diverge?", "threads_per_inst", "warp-divergence"},
    divergence,
    {m::threads_per_inst}};
const CheckNode kAtomics{{"atomics", "Do global atomics contend?",
                          "l2_atomic_busiest_pct, else (atom_requests + red_requests) / "
                          "gld_requests",
                          "atomic-contention"},
                         atomics,
                         {m::atom_requests, m::red_requests, m::gld_requests},
                         Rank::cause_of_waiting};
const CheckNode kSync{
    {"sync", "Do warps wait at barriers?", "stall_barrier / warp_latency", "sync-overhead"},
    stall_share(m::stall_barrier, "barrier_share", "sync.barrier_share", true),
    {m::stall_barrier, m::warp_latency}};
const CheckNode kCompute{{"compute-roof", "Are the SMs near their peak?", "sm_pct", "compute-bound",
                          kStandingScore + 0.05},
                         compute,
                         {m::sm_pct}};
const CheckNode kMio{{"mio", "Do warps wait on the MIO queue (shared memory, constant cache)?",
                      "stall_mio_throttle / warp_latency", "mio-throttle"},
                     stall_share(m::stall_mio_throttle, "mio_throttle_share", "mio.throttle_share"),
                     {m::stall_mio_throttle, m::warp_latency}};

// The branches of the root, with the checks each visits in order.
struct Branch {
  const char* name;     // answer of the root node
  const char* verdict;  // overall verdict for this branch
  std::vector<const CheckNode*> checks;
};

const std::vector<Branch>& branches() {
  static const std::vector<Branch> b = {
      {"memory",
       "memory-bound",
       {&kCoalescing, &kDramExcess, &kLocal, &kSharedBanks, &kAtomics, &kOccupancy, &kTail,
        &kAtRoof, &kBelowRoof}},
      {"compute",
       "compute-bound",
       {&kCoalescing, &kDramExcess, &kSharedBanks, &kLocal, &kAtomics, &kDivergence, &kMio, &kSync,
        &kLatency, &kOccupancy, &kTail, &kCompute}},
      {"neither",
       "latency-bound",
       {&kCoalescing, &kDramExcess, &kSharedBanks, &kLocal, &kAtomics, &kDivergence, &kMio, &kSync,
        &kLatency, &kOccupancy, &kTail, &kLaunch}},
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

metrics::Unit evidence_unit(const std::string& metric) {
  using U = metrics::Unit;
  static const std::map<std::string, U> own = {
      {"roof_fraction", U::fraction},
      {"dram_over_copy_roof", U::fraction},
      {"load_bytes_per_request", U::bytes},
      {"tma_bytes", U::bytes},
      {"worst_direction_overfetch", U::ratio},
      {"theoretical_occupancy", U::fraction},
      {"idle_fraction_last_wave", U::fraction},
      {"long_scoreboard_share", U::fraction},
      {"barrier_share", U::fraction},
      {"duration_s", U::seconds},
      {"mio_throttle_share", U::fraction},
      {"launches", U::count},
      {"lanes_per_warp", U::ratio},
      {"waves", U::ratio},
      {"excess_wavefronts_per_inst", U::ratio},
      {"shared_wait_share", U::fraction},
      {"local_over_global_bytes", U::ratio},
      {"atomics_per_load_request", U::ratio},
      {"dram_beyond_overfetch", U::ratio},
      // the timeline's (reports/diagnosis/timeline_diagnosis.cpp)
      {"kernel_fraction", U::fraction},
      {"transfer_fraction", U::fraction},
      {"on_demand_fraction", U::fraction},
      {"idle_fraction", U::fraction},
      {"exposed_transfer_fraction", U::fraction},
      {"overlap_fraction", U::fraction},
      {"slowest_host_link_bandwidth", U::bytes_per_second},
      {"on_demand_bytes", U::bytes},
      {"gpu_page_faults", U::count},
      {"mean_kernel_seconds", U::seconds},
      {"kernels", U::count}};
  auto it = own.find(metric);
  return it != own.end() ? it->second : unit_of(metric);
}

const std::vector<RuleInfo>& kernel_rules() {
  static const std::vector<RuleInfo> rules = [] {
    std::vector<RuleInfo> out;
    for (const auto& branch : branches())
      for (const CheckNode* node : branch.checks) {
        if (std::any_of(out.begin(), out.end(),
                        [&](const RuleInfo& r) { return r.node == node->info.id; }))
          continue;
        out.push_back({node->info.id, node->info.finding,
                       std::vector<std::string>(node->needs.begin(), node->needs.end())});
      }
    return out;
  }();
  return rules;
}

std::string node_of_finding(const std::string& finding) {
  for (const auto& branch : branches())
    for (const CheckNode* node : branch.checks)
      if (finding == node->info.finding) return node->info.id;
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

  // At the compute roof, what only the SM's headroom bounds does not lead: a warp-specialized
  // GEMM at 88% of the SM peak waits at barriers by design (its producer warps), and waiting
  // less would at most close the 12% left, so the roof is what limits it. Below the roof the
  // same cap still lets barrier waits lead (the reduction lab's interleaved trees, at 68-73%,
  // run 4.6x faster without them).
  bool only_bounded = true;
  for (const CheckNode* node : branch.checks) {
    const Outcome outcome = node->evaluate(probe);
    const auto before = out.findings.size();
    record(out, node->info, outcome, thresholds["diagnosis.min_severity"]);
    const bool problem = out.findings.size() > before && !is_standing(out.findings.back());
    if (problem && !outcome.bounded_by_headroom) only_bounded = false;
  }
  const auto sm = probe.metric(m::sm_pct);
  rank(out, only_bounded && sm && *sm >= thresholds["compute_bound.at_roof_sm_pct"]);
  // Then each node's Rank, and the verdict of the principal finding's node where it names one.
  const auto ranked = [&branch](Rank rank) {
    return [&branch, rank](const Finding& f) {
      for (const CheckNode* node : branch.checks)
        if (f.id == node->info.finding) return node->rank == rank;
      return false;
    };
  };
  auto& f = out.findings;
  std::stable_partition(std::find_if(f.begin(), f.end(), ranked(Rank::waiting)), f.end(),
                        ranked(Rank::cause_of_waiting));
  std::stable_partition(f.begin(), f.end(), std::not_fn(ranked(Rank::after_problems)));
  for (const CheckNode* node : branch.checks)
    if (!f.empty() && node->verdict && f.front().id == node->info.finding)
      out.verdict = node->verdict;
  return out;
}

}  // namespace gpulab::report
