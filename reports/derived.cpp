#include "reports/derived.hpp"

#include <algorithm>
#include <optional>
#include <tuple>

#include "reports/report.hpp"
#include "reports/timeline.hpp"

namespace gpulab::report {
namespace {

namespace m = metrics::name;
namespace d = derived;
using U = metrics::Unit;

const std::vector<DerivedTraits> kDerived = {
    {d::gld_sectors_per_request, U::ratio, "gld_sectors / gld_requests",
     "sectors per global load request; 4 when a warp reads 128 contiguous bytes of 4-byte words"},
    {d::gst_sectors_per_request, U::ratio, "gst_sectors / gst_requests",
     "sectors per global store request; 4 when a warp writes 128 contiguous bytes"},
    {d::gld_overfetch, U::ratio, "32 x gld_sectors / gld_bytes_requested",
     "bytes global loads moved per byte they asked for, whatever the access width; 1 is ideal"},
    {d::gst_overfetch, U::ratio, "32 x gst_sectors / gst_bytes_requested",
     "bytes global stores moved per byte they wrote; 1 is ideal"},
    {d::global_overfetch, U::ratio,
     "32 x (gld_sectors + gst_sectors) / (gld_bytes_requested + gst_bytes_requested)",
     "bytes all global accesses moved per byte they asked for: over-fetch weighted by traffic "
     "(a direction with no requested bytes, e.g. only cp.async or TMA copies, is left out)"},
    {d::global_overfetch_past_l1, U::ratio,
     "32 x (gld_sectors x (1 - l1_hit_pct / 100) + gst_sectors) / (gld_bytes_requested + "
     "gst_bytes_requested)",
     "bytes global accesses moved past L1 per byte they asked for: a load sector that hits in "
     "L1 (the rest of it was used by another lane or instruction) costs no L2 or DRAM traffic. "
     "The hit rate is L1's over all its sectors"},
    {d::shld_wavefronts_per_inst, U::ratio, "shld_wavefronts / shld_inst",
     "bank passes per shared load instruction; 1 for conflict-free 4-byte loads, 32 worst"},
    {d::shst_wavefronts_per_inst, U::ratio, "shst_wavefronts / shst_inst",
     "bank passes per shared store instruction; 1 for conflict-free 4-byte stores"},
    {d::shared_excess_wavefronts, U::count,
     "min(max(0, shld_wavefronts - shld_inst) + max(0, shst_wavefronts - shst_inst), "
     "shld_conflicts_raw + shst_conflicts_raw), each sum with the shared atomics' term where "
     "the set has them (full)",
     "shared wavefronts spent on bank conflicts. Wavefronts beyond one per instruction count "
     "every 8- and 16-byte access as conflicted (they need 2 and 4 wavefronts anyway); the "
     "hardware conflict counter does not, and for 4-byte accesses the two agree: the smaller "
     "is the estimate"},
    {d::local_bytes, U::bytes, "local_ld_bytes + local_st_bytes",
     "local-memory traffic: register spills, stack frames, dynamically indexed arrays"},
    {d::dram_bytes, U::bytes, "dram_read + dram_write", "bytes moved to and from device memory"},
    {d::dram_bandwidth, U::bytes_per_second, "dram_bytes / duration",
     "DRAM bandwidth during the profiled kernel"},
    {d::dram_read_over_model, U::ratio, "dram_read / model bytes read",
     "bytes read per byte the computation must read; 1.0 is ideal"},
    {d::dram_write_over_model, U::ratio, "dram_write / model bytes written",
     "bytes written per byte the computation must write (L2 write-back timing makes it noisy)"},
    {d::dram_over_model, U::ratio, "dram_bytes / model bytes",
     "DRAM bytes moved per byte the computation must move"},
    {d::achieved_occupancy, U::fraction, "warps_active_pct / 100",
     "active warps over the SM's warp slots, averaged over active cycles"},
    {d::occupancy_ratio, U::ratio, "achieved_occupancy / theoretical occupancy (static attributes)",
     "how much of the possible occupancy the kernel reached"},
};

std::optional<double> get(const std::map<std::string, double>& values, const char* name) {
  auto it = values.find(name);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

// Sets out[name] = num / den when both exist and den is not zero.
void ratio(std::map<std::string, double>& out, const char* name, std::optional<double> num,
           std::optional<double> den) {
  if (num && den && *den != 0) out[name] = *num / *den;
}

}  // namespace

const std::vector<DerivedTraits>& derived_catalogue() { return kDerived; }

const DerivedTraits* find_derived(const std::string& name) {
  auto it = std::find_if(kDerived.begin(), kDerived.end(),
                         [&](const DerivedTraits& t) { return name == t.name; });
  return it == kDerived.end() ? nullptr : &*it;
}

metrics::Unit unit_of(const std::string& name) {
  if (const auto* raw = metrics::find(name)) return raw->unit;
  if (const auto* derived = find_derived(name)) return derived->unit;
  if (const auto* figure = find_timeline_figure(name)) return figure->unit;
  return metrics::Unit::ratio;
}

std::map<std::string, double> derive(const Kernel& kernel, const WorkModel* model) {
  const auto& raw = kernel.metrics;
  std::map<std::string, double> out;

  ratio(out, d::gld_sectors_per_request, get(raw, m::gld_sectors), get(raw, m::gld_requests));
  ratio(out, d::gst_sectors_per_request, get(raw, m::gst_sectors), get(raw, m::gst_requests));
  if (const auto s = get(raw, m::gld_sectors))
    ratio(out, d::gld_overfetch, 32.0 * *s, get(raw, m::gld_bytes_requested));
  if (const auto s = get(raw, m::gst_sectors))
    ratio(out, d::gst_overfetch, 32.0 * *s, get(raw, m::gst_bytes_requested));
  // Over loads and stores together, weighted by traffic. A direction whose sectors the
  // instrumented counts do not see (cp.async and TMA copies move sectors but issue no LDG/STG)
  // is left out rather than counted as waste. Past L1, the load sectors L1 served are taken out.
  const auto hit = get(raw, m::l1_hit_pct);
  const double load_miss = hit ? 1.0 - std::clamp(*hit, 0.0, 100.0) / 100.0 : 1.0;
  double moved = 0, past_l1 = 0, asked = 0;
  for (const auto& [sectors, bytes, miss] :
       {std::tuple{m::gld_sectors, m::gld_bytes_requested, load_miss},
        std::tuple{m::gst_sectors, m::gst_bytes_requested, 1.0}}) {
    const auto s = get(raw, sectors), b = get(raw, bytes);
    if (s && b && *b > 0) {
      moved += 32.0 * *s;
      past_l1 += 32.0 * *s * miss;
      asked += *b;
    }
  }
  if (asked > 0) out[d::global_overfetch] = moved / asked;
  if (asked > 0 && hit) out[d::global_overfetch_past_l1] = past_l1 / asked;

  const auto shld_wf = get(raw, m::shld_wavefronts), shld_inst = get(raw, m::shld_inst);
  const auto shst_wf = get(raw, m::shst_wavefronts), shst_inst = get(raw, m::shst_inst);
  ratio(out, d::shld_wavefronts_per_inst, shld_wf, shld_inst);
  ratio(out, d::shst_wavefronts_per_inst, shst_wf, shst_inst);
  if (shld_wf && shld_inst && shst_wf && shst_inst) {
    double excess = std::max(0.0, *shld_wf - *shld_inst) + std::max(0.0, *shst_wf - *shst_inst);
    // Measured on the H200: equal to the conflict counter for 4-byte accesses (the transposes,
    // the reductions); for the 16-byte loads of a register-tiled matmul 270M against 1.9M.
    const auto ld_conflicts = get(raw, m::shld_conflicts), st_conflicts = get(raw, m::shst_conflicts);
    std::optional<double> conflicts;
    if (ld_conflicts && st_conflicts) conflicts = *ld_conflicts + *st_conflicts;
    // Shared atomics where the set has them (`full`): CUB's radix-sort histograms conflict on
    // their digit counters, 7-18 M conflicts with no load or store conflict (ncu, on the H200).
    const auto at_wf = get(raw, m::shatom_wavefronts), at_inst = get(raw, m::shatom_inst),
               at_conflicts = get(raw, m::shatom_conflicts);
    if (at_wf && at_inst && at_conflicts) {
      excess += std::max(0.0, *at_wf - *at_inst);
      if (conflicts) *conflicts += *at_conflicts;
    }
    if (conflicts) excess = std::min(excess, *conflicts);
    out[d::shared_excess_wavefronts] = excess;
  }

  const auto local_ld = get(raw, m::local_ld_bytes), local_st = get(raw, m::local_st_bytes);
  if (local_ld && local_st) out[d::local_bytes] = *local_ld + *local_st;

  const auto dram_rd = get(raw, m::dram_read), dram_wr = get(raw, m::dram_write);
  if (dram_rd && dram_wr) {
    const double bytes = *dram_rd + *dram_wr;
    out[d::dram_bytes] = bytes;
    if (const auto ns = get(raw, m::duration)) ratio(out, d::dram_bandwidth, bytes, *ns * 1e-9);
    if (model) ratio(out, d::dram_over_model, bytes, model->bytes());
  }
  if (model) {
    ratio(out, d::dram_read_over_model, dram_rd, model->bytes_read);
    ratio(out, d::dram_write_over_model, dram_wr, model->bytes_written);
  }

  std::optional<double> achieved;
  if (const auto pct = get(raw, m::warps_active_pct)) achieved = *pct / 100.0;
  if (achieved) out[d::achieved_occupancy] = *achieved;
  const double theoretical = kernel.attributes.theoretical_occupancy;
  if (theoretical > 0) ratio(out, d::occupancy_ratio, achieved, theoretical);
  return out;
}

void derive_all(Report& report) {
  for (auto& variant : report.variants) {
    const WorkModel* model = variant.kernels.size() == 1 ? &report.work_of(variant) : nullptr;
    for (auto& kernel : variant.kernels) kernel.derived = derive(kernel, model);
  }
}

}  // namespace gpulab::report
