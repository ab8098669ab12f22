// Readings more than one rule takes: stall shares, TMA bytes, the roof standing, waves, what
// holds occupancy down (reports/diagnosis/rules/readings.hpp).
#include "reports/diagnosis/rules/readings.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "reports/derived.hpp"
#include "reports/diagnosis/occupancy_limit.hpp"
#include "reports/report.hpp"
#include "reports/units.hpp"

namespace gpulab::report::walk::rules {

namespace m = metrics::name;
namespace d = derived;

std::optional<double> stall_fraction(const Probe& p, const char* reason) {
  const auto part = p.metric(reason), total = p.metric(m::warp_latency);
  if (part && total && *total > 0) return *part / *total;
  return std::nullopt;
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

std::function<Outcome(const Probe&)> stall_share(const char* reason, const char* share_name,
                                                 const char* threshold, bool up_to_headroom) {
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

std::optional<double> waves_of(const KernelContext& c) {
  const auto& a = c.kernel->attributes;
  if (!c.device || c.device->sm_count <= 0 || a.max_active_blocks_per_sm <= 0 || a.grid_blocks == 0)
    return std::nullopt;
  const double per_wave = static_cast<double>(c.device->sm_count) * a.max_active_blocks_per_sm;
  return static_cast<double>(a.grid_blocks) / per_wave;
}

double idle_last_wave(double waves) { return (std::ceil(waves) - waves) / std::ceil(waves); }

double counted(const std::map<std::string, double>& counters, const char* name) {
  auto it = counters.find(name);
  return it == counters.end() ? 0.0 : it->second;
}

LineMeasure stall_lines(const char* reason) {
  const std::string key = std::string(source_counter::stall_prefix) + reason;
  return {fmt::format("the warps' {} stall samples", reason),
          [key](const std::map<std::string, double>& c) { return counted(c, key.c_str()); },
          [reason = std::string(reason)](const LineFigures& f) {
            return f.top_stall == reason && f.top_stall_share
                       ? fmt::format("{:.0f}% of the line's samples", 100 * *f.top_stall_share)
                       : std::string();
          }};
}

}  // namespace gpulab::report::walk::rules
