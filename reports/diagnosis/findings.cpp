// The finding catalogue and the threshold catalogue of the diagnosis (docs/diagnosis.md).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "reports/base/errors.hpp"
#include "reports/base/user_input.hpp"
#include "reports/diagnosis/diagnosis.hpp"

namespace gpulab::report {
namespace {

// Each range holds the values that mean something: a share lies in [0, 1], a percentage of peak
// in [0, 100], threads per instruction in [0, 32]; a ratio or count with no natural ceiling goes
// up to 1e6, so that a high value can still turn its check off.
const std::vector<ThresholdTraits> kThresholds = {
    {"diagnosis.min_severity", 0.1, 0, 1,
     "severity (the share of time a problem plausibly costs) below which a yes is reported as "
     "negligible instead of as a finding"},
    {"diagnosis.min_time_share", 0.02, 0, 1,
     "share of its variant's (or program's) GPU time below which a kernel function is summarized "
     "instead of diagnosed (--kernel diagnoses it anyway)"},
    {"memory_bound.dram_pct", 60, 0, 100,
     "DRAM throughput, % of peak, from which the kernel counts as memory-bound"},
    {"compute_bound.sm_pct", 60, 0, 100,
     "SM throughput, % of peak, from which the kernel counts as compute-bound"},
    {"compute_bound.at_roof_sm_pct", 80, 0, 100,
     "SM throughput, % of peak, from which compute-bound leads over findings whose gain only "
     "the SM's headroom bounds (barrier waits)"},
    {"uncoalesced.overfetch", 2, 1, 1e6,
     "bytes moved per byte requested by global loads or stores (instrumented counts), from "
     "which accesses count as uncoalesced"},
    {"uncoalesced.sectors_per_request", 8, 1, 1e6,
     "without the instrumented counts: global sectors per request from which accesses count "
     "as uncoalesced (4 is ideal for 4-byte words, 8 for 8-byte, 16 for 16-byte)"},
    {"redundant.dram_over_model", 1.5, 0, 1e6,
     "DRAM bytes per byte the work must move (reads beyond the load over-fetch when it is "
     "measured), from which traffic counts as redundant"},
    {"at_roof.dram_over_model", 1.15, 0, 1e6,
     "most DRAM bytes per work-model byte for the bytes to count as already minimal"},
    {"at_roof.roof_fraction", 0.87, 0, 1,
     "effective bandwidth over the measured copy roof (without a work model, DRAM bandwidth over "
     "it) from which a memory-bound kernel is at the roof; below it, it is below the roof"},
    {"at_roof.dram_pct", 77, 0, 100,
     "DRAM throughput, % of peak, that counts as at the roof for a kernel without a work model "
     "in a report without a measured copy roof"},
    {"shared_banks.excess_per_inst", 0.5, 0, 1e6,
     "shared-memory wavefronts beyond one per instruction, per instruction, from which bank "
     "conflicts count"},
    {"shared_banks.stall_share", 0.2, 0, 1,
     "share of warp cycles waiting on the shared-memory pipe (mio_throttle + short_scoreboard) "
     "from which bank conflicts count, where the stall reasons are measured"},
    {"local.fraction", 0.05, 0, 1e6,
     "local-memory bytes per byte of global-memory traffic from which local memory counts"},
    {"latency.long_scoreboard_share", 0.4, 0, 1,
     "share of warp cycles stalled on L1TEX (global/local) results from which the kernel is "
     "latency-bound"},
    {"occupancy.achieved", 0.5, 0, 1, "achieved occupancy (fraction) at or below which it is low"},
    {"tail.min_waves", 1, 0, 1e6,
     "waves a grid must exceed to have a tail: a smaller grid leaves SMs idle because it is "
     "small (the occupancy node names it), not because its last wave is partial"},
    {"tail.max_waves", 4, 0, 1e6,
     "tail effects are judged only for grids of at most this many waves"},
    {"tail.idle_fraction", 0.25, 0, 1,
     "share of SM time the partial last wave leaves idle, from which the tail counts"},
    {"launch.duration_s", 10e-6, 0, 3600,
     "kernel duration (s) below which launch overhead is comparable to the work"},
    {"launch.min_launches", 10, 1, 1e12,
     "launches of a kernel function from which a kernel shorter than launch.duration_s is "
     "diagnosed (launch overhead among others); fewer: too little work to diagnose"},
    {"transfers.exposed_fraction", 0.5, 0, 1,
     "share of a traced variant's time spent in host-device transfers that no kernel overlaps, "
     "from which transfers dominate"},
    {"um_faults.on_demand_fraction", 0.1, 0, 1,
     "share of a traced variant's time spent migrating pages on demand (after GPU page "
     "faults), from which faults count"},
    {"launch_gaps.idle_fraction", 0.3, 0, 1,
     "share of a traced variant's time the GPU sits idle between kernels shorter than "
     "launch.duration_s, from which launch overhead counts"},
    {"divergence.threads_per_inst", 24, 0, 32,
     "active threads per warp instruction below which divergence counts (32 = none)"},
    {"atomics.per_load_request", 0.5, 0, 1e6,
     "global atomic requests per global load request from which atomics contend, where the L2 "
     "slices' atomic units are not measured"},
    {"atomics.l2_slice_busy_pct", 50, 0, 100,
     "% of the elapsed cycles the busiest L2 slice's atomic unit is active, from which atomics "
     "contend"},
    {"mio.throttle_share", 0.5, 0, 1,
     "share of warp cycles stalled on a full MIO queue (shared memory, constant cache, special "
     "functions) from which it dominates"},
    {"sync.barrier_share", 0.3, 0, 1,
     "share of warp cycles stalled at barriers from which synchronization counts"},
};

const std::vector<FindingTraits> kFindings = {
    {"uncoalesced-global",
     "Uncoalesced global memory access",
     "A warp's loads or stores touch more 32-byte sectors than the bytes it uses need: strided, "
     "column-wise or misaligned addresses make the memory system move whole sectors for a few "
     "useful bytes each.",
     "Make consecutive threads touch consecutive addresses: swap the index mapping, stage tiles "
     "through shared memory to turn the access around, use structure-of-arrays layouts, align "
     "rows (cudaMallocPitch).",
     "global_overfetch_past_l1 under uncoalesced.overfetch: each byte the warps ask for moves "
     "past L1 about once",
     {"transpose", "coalescing", "aos-soa", "pitched"}},
    {"redundant-dram-traffic",
     "DRAM traffic beyond what the work needs",
     "The kernel reads or writes more DRAM bytes than its inputs and outputs hold: data is "
     "re-read from DRAM, or partial sectors cost extra reads and writes.",
     "Reuse data on chip: tile into shared memory or registers so each byte is fetched once, "
     "fuse passes, keep the working set within L2.",
     "DRAM bytes within redundant.dram_over_model of the work model (beyond the load over-fetch), "
     "or DRAM far from busy",
     {"matmul", "aos-soa", "transpose"}},
    {"host-device-transfers",
     "Host-device transfers dominate",
     "Copies between host and device take much of the time and do not overlap with kernels; "
     "pageable host memory makes them slower still.",
     "Use pinned host memory, split the data into chunks, and overlap copies with kernels on "
     "several streams; keep data resident on the device between kernels.",
     "transfers that no kernel overlaps under transfers.exposed_fraction of the traced span",
     {"streams"}},
    {"um-page-faults",
     "Unified-memory page faults",
     "Managed memory first touched on the host migrates page by page on demand when the GPU "
     "faults on it, stalling the kernel.",
     "Prefetch with cudaMemPrefetchAsync before the kernel, give access hints "
     "(cudaMemAdvise), or use explicit device allocations and copies.",
     "on-demand migrations under um_faults.on_demand_fraction of the traced span",
     {"unified-memory"}},
    {"memory-bound-at-roof",
     "Memory-bound at the bandwidth roof",
     "The kernel moves about the bytes its work needs, at close to the bandwidth the device "
     "reaches: it is as fast as its data movement allows.",
     "Only moving fewer bytes helps now: fuse with neighbouring kernels, use smaller data types, "
     "or compress.",
     "DRAM bytes above at_roof.dram_over_model of the work model, or the effective bandwidth (DRAM "
     "bandwidth without a model) under at_roof.roof_fraction of the copy roof",
     {"transpose", "vectorize"}},
    {"memory-bound-below-roof",
     "Memory-bound below the bandwidth roof",
     "DRAM is the busiest unit and the kernel moves about the bytes its work needs, but slower "
     "than the device can move them. By Little's law an SM sustains its share of the roof only "
     "with latency x bandwidth / SMs bytes outstanding (~23 KB on an H200); few resident warps, a "
     "partial last wave, barriers between load phases and too few or too narrow loads per thread "
     "each keep fewer in flight. Its cause names the one the counters show.",
     "Keep more bytes in flight per SM: issue several independent loads per thread before using "
     "any (unroll), use 16-byte accesses, move more data per block between barriers, keep "
     "occupancy up, and size the grid in full waves.",
     "DRAM bytes above at_roof.dram_over_model of the work model, or the bandwidth at "
     "at_roof.roof_fraction of the copy roof or above (then it is at the roof)",
     {"transpose", "vectorize"}},
    {"latency-bound",
     "Latency-bound: warps wait on memory",
     "Neither DRAM nor the SMs are near their peaks; warps spend their cycles waiting on "
     "global or local memory results, and too little independent work is in flight to hide it.",
     "Put more independent loads in flight per thread (unrolling, vector loads), raise "
     "occupancy, or copy asynchronously (cp.async, TMA) while computing.",
     "long-scoreboard stalls under latency.long_scoreboard_share of the warps' cycles",
     {"async-copy", "vectorize", "occupancy"}},
    {"shared-bank-conflicts",
     "Shared-memory bank conflicts",
     "Threads of a warp hit different words in the same shared-memory bank, so the access is "
     "split into several wavefronts that the shared-memory pipe serves one after another.",
     "Pad shared arrays (one extra word per row) or swizzle the index (XOR with the row) so a "
     "warp's accesses spread over all 32 banks; prefer sequential addressing in reductions.",
     "excess shared-memory wavefronts under shared_banks.excess_per_inst per instruction, or "
     "waits on the shared-memory pipe under shared_banks.stall_share of the warps' cycles",
     {"transpose", "reduction"}},
    {"local-memory",
     "Local-memory traffic (spills or local arrays)",
     "Per-thread data lives in local memory, which is device memory cached in L1/L2: register "
     "spills or arrays indexed at run time turn register accesses into memory traffic.",
     "Index per-thread arrays with compile-time constants (unroll), reduce live values, or relax "
     "register caps (__launch_bounds__, -maxrregcount) that force spills.",
     "local-memory bytes under local.fraction of the global traffic",
     {"spill"}},
    {"low-occupancy",
     "Low occupancy",
     "Few warps are resident per SM, so there is little other work to switch to when a warp "
     "waits; the limit is the block size, registers, shared memory or the block count.",
     "Use blocks of 128 to 256 threads or more, reduce registers or shared memory per block, "
     "or launch more blocks.",
     "achieved occupancy above occupancy.achieved, or DRAM or the SMs near their peak",
     {"occupancy"}},
    {"tail-effect",
     "Tail effect: a partial last wave",
     "The grid is a few waves of blocks and the last one is partial: most SMs idle while a few "
     "finish it.",
     "Size the grid as a multiple of the SMs' capacity, or use a grid-stride loop over a grid "
     "of (number of SMs x blocks per SM) blocks.",
     "a grid of one wave or less, more than tail.max_waves waves, or a last wave that leaves under "
     "tail.idle_fraction of the SMs idle",
     {"occupancy"}},
    {"launch-overhead",
     "Launch overhead",
     "The kernel runs for a few microseconds, about as long as it takes to launch it, so the "
     "GPU idles between launches.",
     "Batch work into fewer, larger kernels, or capture the launch sequence in a CUDA graph "
     "and replay it.",
     "a kernel at least launch.duration_s long, or launched fewer than launch.min_launches times",
     {"cuda-graphs"}},
    {"warp-divergence",
     "Warp divergence",
     "Threads of a warp take different branches, so the warp runs both paths with part of its "
     "lanes masked off.",
     "Make the branch uniform per warp (sort or partition the data), or compute both results "
     "and select without branching.",
     "threads per instruction within divergence.threads_per_inst of the lanes the block size lets "
     "a warp have",
     {"divergence"}},
    {"atomic-contention",
     "Atomic contention",
     "Many threads update the same address atomically; the updates are serialized at L2.",
     "Aggregate first: reduce within the warp (shuffles) and the block (shared memory), then "
     "issue one atomic per block.",
     "the busiest L2 slice's atomic unit active under atomics.l2_slice_busy_pct of the time "
     "(without that counter: global atomics under atomics.per_load_request per global load "
     "request)",
     {"atomics", "reduction"}},
    {"sync-overhead",
     "Synchronization overhead",
     "Warps spend much of their time waiting at barriers (__syncthreads) for the rest of their "
     "block.",
     "Synchronize less often: do more work between barriers, use warp-level primitives "
     "(shuffles) inside a warp, and keep the work balanced between warps.",
     "barrier stalls under sync.barrier_share of the warps' cycles",
     {"reduction"}},
    {"mio-throttle",
     "MIO queue pressure (shared memory, constant cache, special functions)",
     "Warps wait for the memory-input/output queue that serves shared memory, the constant "
     "cache and special functions: too many such instructions, or each split into many "
     "passes (constant reads with a different address per thread are served one address at a "
     "time; shared-memory accesses with bank conflicts take several wavefronts).",
     "Give constant reads one address per warp (index by warp, not by thread) or move the "
     "table to global memory; remove bank conflicts; keep reused values in registers.",
     "MIO-throttle stalls under mio.throttle_share of the warps' cycles",
     {"constant-memory", "transpose", "reduction"}},
    {"compute-bound",
     "Compute-bound",
     "The SMs run near their peak throughput: arithmetic, not data movement, limits the kernel.",
     "Use faster instructions (tensor cores, lower precision where acceptable), remove redundant "
     "arithmetic, or move to a library kernel tuned for the device.",
     "SM throughput under compute_bound.sm_pct of its peak",
     {"matmul"}},
};

}  // namespace

const std::vector<ThresholdTraits>& threshold_catalogue() { return kThresholds; }

const std::vector<FindingTraits>& finding_catalogue() { return kFindings; }

const FindingTraits* find_finding(const std::string& id) {
  auto it = std::find_if(kFindings.begin(), kFindings.end(),
                         [&](const FindingTraits& f) { return id == f.id; });
  return it == kFindings.end() ? nullptr : &*it;
}

Thresholds::Thresholds() {
  for (const auto& t : kThresholds) values_[t.name] = t.default_value;
}

double Thresholds::operator[](const std::string& name) const { return values_.at(name); }

std::map<std::string, double> Thresholds::overridden() const {
  std::map<std::string, double> out;
  for (const auto& t : kThresholds)
    if (values_.at(t.name) != t.default_value) out[t.name] = values_.at(t.name);
  return out;
}

void Thresholds::set(const std::string& name, double value) {
  auto it = values_.find(name);
  if (it == values_.end()) {
    throw UsageError(
        fmt::format("unknown threshold '{}' (gpulab diagnose --list-thresholds lists them)", name));
  }
  const auto& traits = *std::find_if(kThresholds.begin(), kThresholds.end(),
                                     [&](const ThresholdTraits& t) { return name == t.name; });
  // A NaN compares false with everything: an unchecked one would turn every test it takes part
  // in into "no" and pass every gate.
  if (!std::isfinite(value) || value < traits.min || value > traits.max)
    throw UsageError(fmt::format("--threshold {}: {} is out of range (allowed: {} to {})", name,
                                 value, traits.min, traits.max));
  it->second = value;
}

void Thresholds::set_from_text(const std::string& assignment) {
  const auto [name, text] = split_assignment("--threshold", assignment);
  set(name, parse_number("--threshold " + name, text));
}

}  // namespace gpulab::report
