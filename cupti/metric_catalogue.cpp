#include "cupti/metric_catalogue.hpp"

#include <algorithm>

#include "reports/errors.hpp"

namespace gpulab::metrics {
namespace {

using U = Unit;

// Order = the order text reports print rows in: time, DRAM, global, shared, local, execution.
const std::vector<MetricTraits> kCatalogue = {
    {name::duration, "duration", U::nanoseconds, "kernel duration on the GPU (under replay)"},
    {name::dram_read, "dram_read", U::bytes, "bytes read from device memory (HBM)"},
    {name::dram_write, "dram_write", U::bytes, "bytes written to device memory (HBM)"},
    {name::dram_pct, "dram_pct", U::percent, "DRAM throughput, % of peak sustained"},
    {name::sm_pct, "sm_pct", U::percent, "SM throughput (busiest SM unit), % of peak sustained"},
    {name::gld_sectors, "gld_sectors", U::count, "32-byte sectors moved for global loads"},
    {name::gld_requests, "gld_requests", U::count, "global load requests (one per warp instruction)"},
    {name::gst_sectors, "gst_sectors", U::count, "32-byte sectors moved for global stores"},
    {name::gst_requests, "gst_requests", U::count, "global store requests (one per warp instruction)"},
    {name::shld_wavefronts, "shld_wavefronts", U::count, "shared-memory load wavefronts (passes through the banks)"},
    {name::shst_wavefronts, "shst_wavefronts", U::count, "shared-memory store wavefronts"},
    {name::shld_inst, "shld_inst", U::count, "shared-memory load warp instructions executed"},
    {name::shst_inst, "shst_inst", U::count, "shared-memory store warp instructions executed"},
    {name::shld_conflicts, "shld_conflicts_raw", U::count,
     "raw bank-conflict counter, loads (over-counts on GH100: read wavefronts instead)"},
    {name::shst_conflicts, "shst_conflicts_raw", U::count,
     "raw bank-conflict counter, stores (over-counts on GH100: read wavefronts instead)"},
    {name::local_ld_bytes, "local_ld_bytes", U::bytes, "local-memory bytes loaded (spills, stack, local arrays)"},
    {name::local_st_bytes, "local_st_bytes", U::bytes, "local-memory bytes stored"},
    {name::warps_active_pct, "warps_active_pct", U::percent, "achieved occupancy: active warps, % of the SM's slots"},
    {name::threads_per_inst, "threads_per_inst", U::ratio, "active threads per executed warp instruction (32 = no divergence)"},
    {name::inst_executed, "inst_executed", U::count, "warp instructions executed"},
    {name::l1_hit_pct, "l1_hit_pct", U::percent, "L1/TEX sector hit rate"},
    {name::l2_hit_pct, "l2_hit_pct", U::percent, "L2 sector hit rate (GH100's split L2 reads low; cross-check DRAM bytes)"},
};

std::vector<std::string> all_names() {
  std::vector<std::string> names;
  for (const auto& m : kCatalogue) names.emplace_back(m.name);
  return names;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

const std::vector<MetricTraits>& catalogue() { return kCatalogue; }

const MetricTraits* find(std::string_view name) {
  auto it = std::find_if(kCatalogue.begin(), kCatalogue.end(), [&](const MetricTraits& m) {
    return name == m.name || name == m.short_name;
  });
  return it == kCatalogue.end() ? nullptr : &*it;
}

std::vector<std::string> set_names() { return {"basic", "none"}; }

bool is_set_name(std::string_view spec) {
  const auto sets = set_names();
  return std::find(sets.begin(), sets.end(), trim(spec)) != sets.end();
}

std::vector<std::string> metric_set(std::string_view set_name) {
  if (set_name == "basic") return all_names();
  if (set_name == "none") return {};
  throw UsageError("unknown metric set '" + std::string(set_name) + "' (known: basic, none)");
}

std::vector<std::string> resolve(std::string_view spec) {
  spec = trim(spec);
  if (is_set_name(spec)) return metric_set(spec);
  std::vector<std::string> names;
  while (!spec.empty()) {
    const auto comma = spec.find(',');
    const auto item = trim(spec.substr(0, comma));
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    if (item.empty()) continue;
    if (const auto* m = find(item)) {
      names.emplace_back(m->name);
    } else if (item.find("__") != std::string_view::npos) {
      names.emplace_back(item);  // a Perfworks name outside the catalogue: CUPTI decides
    } else {
      throw UsageError("unknown metric '" + std::string(item) +
                       "': give a metric set (basic, none), short names from `gpulab list "
                       "--metrics`, or full CUPTI names");
    }
  }
  if (names.empty()) throw UsageError("--metrics names no metric");
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace gpulab::metrics
