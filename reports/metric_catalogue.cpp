#include "reports/metric_catalogue.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "reports/base/errors.hpp"
#include "reports/base/user_input.hpp"

namespace gpulab::report::metrics {
namespace {

using U = Unit;
using G = Group;

// Order = the order text reports print rows in: time, DRAM, global, shared, local, execution.
const std::vector<MetricTraits> kCatalogue = {
    {name::duration, "duration", U::nanoseconds, "kernel duration on the GPU (under replay)"},
    {name::dram_read, "dram_read", U::bytes, "bytes read from device memory (HBM)"},
    {name::dram_write, "dram_write", U::bytes, "bytes written to device memory (HBM)"},
    {name::dram_pct, "dram_pct", U::percent, "DRAM throughput, % of peak sustained"},
    {name::sm_pct, "sm_pct", U::percent, "SM throughput (busiest SM unit), % of peak sustained"},
    {name::l1tex_pct, "l1tex_pct", U::percent,
     "L1/TEX and shared-memory throughput (busiest of its stages), % of peak sustained", G::memory},
    {name::gld_sectors, "gld_sectors", U::count, "32-byte sectors moved for global loads"},
    {name::gld_requests, "gld_requests", U::count,
     "global load requests (one per warp instruction)"},
    {name::gst_sectors, "gst_sectors", U::count, "32-byte sectors moved for global stores"},
    {name::gst_requests, "gst_requests", U::count,
     "global store requests (one per warp instruction)"},
    {name::shld_wavefronts, "shld_wavefronts", U::count,
     "shared-memory load wavefronts (passes through the banks)"},
    {name::shst_wavefronts, "shst_wavefronts", U::count, "shared-memory store wavefronts"},
    {name::shld_inst, "shld_inst", U::count, "shared-memory load warp instructions executed"},
    {name::shst_inst, "shst_inst", U::count, "shared-memory store warp instructions executed"},
    {name::shld_conflicts, "shld_conflicts_raw", U::count,
     "hardware bank-conflict counter, loads (counts wide accesses as conflicts only when they "
     "are)"},
    {name::shst_conflicts, "shst_conflicts_raw", U::count,
     "hardware bank-conflict counter, stores"},
    {name::local_ld_bytes, "local_ld_bytes", U::bytes,
     "local-memory bytes loaded (spills, stack, local arrays)"},
    {name::local_st_bytes, "local_st_bytes", U::bytes, "local-memory bytes stored"},
    {name::warps_active_pct, "warps_active_pct", U::percent,
     "achieved occupancy: active warps, % of the SM's slots"},
    {name::threads_per_inst, "threads_per_inst", U::ratio,
     "active threads per executed warp instruction (32 = no divergence)"},
    {name::inst_executed, "inst_executed", U::count, "warp instructions executed"},
    {name::l1_hit_pct, "l1_hit_pct", U::percent, "L1/TEX sector hit rate"},
    {name::l2_hit_pct, "l2_hit_pct", U::percent,
     "L2 sector hit rate (GH100's split L2 reads low; cross-check DRAM bytes)"},
    // memory: instruction mix and atomics
    {name::gld_inst, "gld_inst", U::count, "global load warp instructions executed", G::memory},
    {name::gst_inst, "gst_inst", U::count, "global store warp instructions executed", G::memory},
    {name::atom_requests, "atom_requests", U::count,
     "global atomic requests that return a value (ATOM)", G::memory},
    {name::red_requests, "red_requests", U::count, "global reductions without a return value (RED)",
     G::memory},
    {name::l2_bytes, "l2_bytes", U::bytes, "bytes moved through L2 (all requests)", G::memory},
    {name::l2_atomic_busiest_pct, "l2_atomic_busiest_pct", U::percent,
     "atomic unit of the busiest L2 slice, % of elapsed cycles active", G::memory},
    {name::l2_atomic_pct, "l2_atomic_pct", U::percent,
     "atomic units of the L2 slices, % of elapsed cycles active, averaged", G::memory},
    {name::shatom_wavefronts, "shatom_wavefronts", U::count, "shared-memory atomic wavefronts",
     G::memory},
    {name::shatom_inst, "shatom_inst", U::count, "shared-memory atomic warp instructions executed",
     G::memory},
    {name::shatom_conflicts, "shatom_conflicts_raw", U::count,
     "hardware bank-conflict counter, shared atomics", G::memory},
    {name::gld_bytes_requested, "gld_bytes_requested", U::bytes,
     "bytes global load instructions asked for (instrumented)", G::memory},
    {name::gst_bytes_requested, "gst_bytes_requested", U::bytes,
     "bytes global store instructions asked for (instrumented)", G::memory},
    // stalls: why warps did not issue, in warp cycles per issued instruction
    {name::warp_latency, "warp_latency", U::ratio,
     "warp cycles per issued instruction, all reasons", G::stalls},
    {name::stall_long_scoreboard, "stall_long_scoreboard", U::ratio,
     "stalled on global/local memory (L1TEX) results", G::stalls},
    {name::stall_short_scoreboard, "stall_short_scoreboard", U::ratio,
     "stalled on shared memory and special-function results", G::stalls},
    {name::stall_barrier, "stall_barrier", U::ratio, "stalled on __syncthreads", G::stalls},
    {name::stall_membar, "stall_membar", U::ratio, "stalled on memory fences", G::stalls},
    {name::stall_lg_throttle, "stall_lg_throttle", U::ratio,
     "stalled on a full local/global memory instruction queue", G::stalls},
    {name::stall_mio_throttle, "stall_mio_throttle", U::ratio,
     "stalled on a full memory-input/output queue (shared memory, special math)", G::stalls},
    {"smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
     "stall_math_pipe_throttle", U::ratio, "stalled on a busy math pipe", G::stalls},
    {"smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", "stall_wait", U::ratio,
     "stalled on fixed-latency dependencies", G::stalls},
    {"smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio", "stall_not_selected",
     U::ratio, "stalled on another eligible warp being picked", G::stalls},
    {"smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio",
     "stall_no_instruction", U::ratio, "stalled on instruction fetch", G::stalls},
    {"smsp__average_warps_issue_stalled_imc_miss_per_issue_active.ratio", "stall_imc_miss",
     U::ratio, "stalled on immediate constant cache misses", G::stalls},
    {"smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio",
     "stall_branch_resolving", U::ratio, "stalled on branch target computation", G::stalls},
    {"smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio",
     "stall_dispatch_stall", U::ratio, "stalled on the dispatcher", G::stalls},
    {"smsp__average_warps_issue_stalled_drain_per_issue_active.ratio", "stall_drain", U::ratio,
     "stalled on memory drain at exit", G::stalls},
    {"smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio", "stall_sleeping",
     U::ratio, "stalled on nanosleep or warp-level yield", G::stalls},
    {"smsp__average_warps_issue_stalled_tex_throttle_per_issue_active.ratio", "stall_tex_throttle",
     U::ratio, "stalled on a full texture queue", G::stalls},
    {"smsp__average_warps_issue_stalled_misc_per_issue_active.ratio", "stall_misc", U::ratio,
     "stalled on miscellaneous reasons", G::stalls},
};

std::vector<std::string> names_in(std::initializer_list<Group> groups) {
  std::vector<std::string> names;
  for (const auto& m : kCatalogue)
    if (std::find(groups.begin(), groups.end(), m.group) != groups.end()) names.emplace_back(m.name);
  return names;
}

}  // namespace

const std::vector<MetricTraits>& catalogue() { return kCatalogue; }

const MetricTraits* find(std::string_view name) {
  auto it = std::find_if(kCatalogue.begin(), kCatalogue.end(), [&](const MetricTraits& m) {
    return name == m.name || name == m.short_name;
  });
  return it == kCatalogue.end() ? nullptr : &*it;
}

std::vector<std::string> set_names() { return {"basic", "stalls", "full", "none"}; }

bool is_set_name(std::string_view spec) {
  const auto sets = set_names();
  return std::find(sets.begin(), sets.end(), spec) != sets.end();
}

std::vector<std::string> metric_set(std::string_view set_name) {
  if (set_name == "basic") return names_in({G::basic});
  if (set_name == "stalls") return names_in({G::basic, G::stalls});
  if (set_name == "full") return names_in({G::basic, G::memory, G::stalls});
  if (set_name == "none") return {};
  throw UsageError("unknown metric set '" + std::string(set_name) +
                   "' (known: basic, stalls, full, none)");
}

std::string smallest_set_with(const std::vector<std::string>& metrics) {
  for (const char* set : {"basic", "stalls", "full"}) {
    const auto in_set = metric_set(set);
    if (std::all_of(metrics.begin(), metrics.end(), [&](const std::string& m) {
          return std::find(in_set.begin(), in_set.end(), m) != in_set.end();
        }))
      return set;
  }
  return "";
}

std::optional<std::string> counter_name(std::string_view name) {
  if (const auto* m = find(name)) return std::string(m->name);
  const bool perfworks_like =
      name.find("__") != std::string_view::npos &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
      });
  if (perfworks_like) return std::string(name);  // outside the catalogue: CUPTI decides
  return std::nullopt;
}

std::vector<std::string> resolve(const std::string& what, const std::string& spec) {
  if (is_set_name(spec)) return metric_set(spec);
  std::vector<std::string> names;
  for (const auto& item : split_list(what, spec)) {
    auto name = counter_name(item);
    if (!name)
      throw UsageError(fmt::format(
          "{}: unknown metric '{}': give a metric set (basic, stalls, full, none), short names "
          "from `gpulab list --metrics`, or full CUPTI names",
          what, item));
    names.push_back(std::move(*name));
  }
  // A metric named twice (by its short and its CUPTI name) is collected once.
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace gpulab::report::metrics
