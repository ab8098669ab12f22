// Derived metrics: ratios of raw counters (and of counters to the lab's work model) that say
// more than the counters alone. Each is defined once, here; docs/metrics.md gives the formulas.
//
// A derived metric is absent when an input is missing or its denominator is zero: "not
// measured" is never printed as 0.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "reports/measures.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::report {

namespace derived {
inline constexpr const char* gld_sectors_per_request = "gld_sectors_per_request";
inline constexpr const char* gst_sectors_per_request = "gst_sectors_per_request";
inline constexpr const char* gld_overfetch = "gld_overfetch";
inline constexpr const char* gst_overfetch = "gst_overfetch";
inline constexpr const char* global_overfetch = "global_overfetch";
inline constexpr const char* global_overfetch_past_l1 = "global_overfetch_past_l1";
inline constexpr const char* shld_wavefronts_per_inst = "shld_wavefronts_per_inst";
inline constexpr const char* shst_wavefronts_per_inst = "shst_wavefronts_per_inst";
inline constexpr const char* shared_excess_wavefronts = "shared_excess_wavefronts";
inline constexpr const char* local_bytes = "local_bytes";
inline constexpr const char* dram_bytes = "dram_bytes";
inline constexpr const char* dram_bandwidth = "dram_bandwidth";
inline constexpr const char* dram_read_over_model = "dram_read_over_model";
inline constexpr const char* dram_write_over_model = "dram_write_over_model";
inline constexpr const char* dram_over_model = "dram_over_model";
inline constexpr const char* achieved_occupancy = "achieved_occupancy";
inline constexpr const char* occupancy_ratio = "occupancy_ratio";
}  // namespace derived

struct DerivedTraits {
  const char* name;
  metrics::Unit unit;
  const char* formula;
  const char* description;
};

// All derived metrics, in the order text reports list them.
const std::vector<DerivedTraits>& derived_catalogue();
const DerivedTraits* find_derived(const std::string& name);

// The unit of a raw (catalogue) or derived metric, or of a timeline figure; ratio for names
// gpulab does not know.
metrics::Unit unit_of(const std::string& name);

// Derives one kernel's metrics. `model` is the work of the whole variant: pass it only when the
// kernel is the variant's only kernel, otherwise the model ratios would be meaningless.
std::map<std::string, double> derive(const Kernel& kernel, const WorkModel* model);

// Fills Kernel::derived of every kernel of every variant.
void derive_all(Report& report);

}  // namespace gpulab::report
