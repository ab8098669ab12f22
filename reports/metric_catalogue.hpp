// The metric catalogue: every CUPTI metric gpulab knows by name, with a short name, a unit and
// what it measures, plus the named metric sets `run --metrics` accepts.
//
// Pure data (no CUPTI headers), so reports/ can label and format metrics without a GPU. Metric
// names are Perfworks names, the same ncu uses; docs/metrics.md lists them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab::report::metrics {

// fraction: 0..1, printed as a percentage; bytes_per_second: printed as GB/s.
enum class Unit { nanoseconds, seconds, bytes, percent, count, ratio, fraction, bytes_per_second };

// Which metric sets include a metric: `basic` = Group::basic; `stalls` = basic + stalls;
// `full` = every group.
enum class Group { basic, memory, stalls };

struct MetricTraits {
  const char* name;        // CUPTI / ncu metric name
  const char* short_name;  // column label in text reports
  Unit unit;
  const char* description;
  Group group = Group::basic;
};

// All known metrics, in the order text reports list them.
const std::vector<MetricTraits>& catalogue();

// Looks a metric up by its CUPTI name or its short name; nullptr when unknown.
const MetricTraits* find(std::string_view name);

// Names of the metric sets ("basic", "stalls", "full", "none").
std::vector<std::string> set_names();

// The smallest metric set ("basic", "stalls", "full") that holds every one of `metrics`; empty
// when none does (a metric outside the catalogue).
std::string smallest_set_with(const std::vector<std::string>& metrics);
// True when `spec` names a metric set rather than listing metrics.
bool is_set_name(std::string_view spec);

// The CUPTI metric names of a set; throws UsageError for an unknown set.
std::vector<std::string> metric_set(std::string_view set_name);

// The CUPTI name `name` stands for: the catalogue's, for one of its CUPTI or short names; `name`
// itself where it looks like a Perfworks name outside the catalogue (letters, digits, '_' and
// '.', with a "__"), for CUPTI to accept or reject; nothing otherwise.
std::optional<std::string> counter_name(std::string_view name);

// Resolves the value of a metrics option (`what`, e.g. "--metrics", leads its errors): a set
// name, or a list of counter names as split_list reads it (reports/base/user_input.hpp). The CUPTI
// names, sorted, each once; throws UsageError for an unknown metric.
std::vector<std::string> resolve(const std::string& what, const std::string& spec);

// Perfworks names the derived metrics read (one definition each, used by reports/derived.cpp).
namespace name {
inline constexpr const char* duration = "gpu__time_duration.sum";
inline constexpr const char* dram_read = "dram__bytes_read.sum";
inline constexpr const char* dram_write = "dram__bytes_write.sum";
inline constexpr const char* dram_pct = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* sm_pct = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* l1tex_pct = "l1tex__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr const char* gld_sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
inline constexpr const char* gld_requests = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
inline constexpr const char* gst_sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
inline constexpr const char* gst_requests = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";
inline constexpr const char* shld_wavefronts = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
inline constexpr const char* shst_wavefronts = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
inline constexpr const char* shld_inst = "smsp__inst_executed_op_shared_ld.sum";
inline constexpr const char* shst_inst = "smsp__inst_executed_op_shared_st.sum";
inline constexpr const char* shld_conflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
inline constexpr const char* shst_conflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";
inline constexpr const char* local_ld_bytes = "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum";
inline constexpr const char* local_st_bytes = "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum";
inline constexpr const char* warps_active_pct = "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr const char* threads_per_inst = "smsp__thread_inst_executed_per_inst_executed.ratio";
inline constexpr const char* l1_hit_pct = "l1tex__t_sector_hit_rate.pct";
inline constexpr const char* l2_hit_pct = "lts__t_sector_hit_rate.pct";
inline constexpr const char* inst_executed = "smsp__inst_executed.sum";
inline constexpr const char* gld_inst = "smsp__inst_executed_op_global_ld.sum";
inline constexpr const char* gst_inst = "smsp__inst_executed_op_global_st.sum";
inline constexpr const char* atom_requests = "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum";
inline constexpr const char* red_requests = "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum";
inline constexpr const char* l2_bytes = "lts__t_bytes.sum";
// How busy the L2 slices' atomic units are, % of the elapsed cycles: the busiest slice's and the
// average. Updates of one address serialize in the one slice that holds it, so contention shows
// as one slice busy while the average stays low.
inline constexpr const char* l2_atomic_busiest_pct =
    "lts__d_atomic_input_cycles_active.max.pct_of_peak_sustained_elapsed";
inline constexpr const char* l2_atomic_pct =
    "lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed";
// Shared-memory atomics (atomicAdd on __shared__: histograms, radix-sort digit counts), whose
// wavefronts and bank conflicts the load and store counters do not include.
inline constexpr const char* shatom_wavefronts =
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum";
inline constexpr const char* shatom_inst = "smsp__inst_executed_op_shared_atom.sum";
inline constexpr const char* shatom_conflicts =
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum";
// Bytes the load/store instructions asked for (counted by instrumenting the code, SASS
// metrics): with the sectors moved they give the over-fetch factor of any access width.
inline constexpr const char* gld_bytes_requested = "smsp__sass_data_bytes_mem_global_op_ld.sum";
inline constexpr const char* gst_bytes_requested = "smsp__sass_data_bytes_mem_global_op_st.sum";
inline constexpr const char* warp_latency = "smsp__average_warp_latency_per_inst_issued.ratio";
// Stall reasons, as warp cycles per issued instruction; the full name of reason R is
// smsp__average_warps_issue_stalled_R_per_issue_active.ratio.
inline constexpr const char* stall_long_scoreboard =
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio";
inline constexpr const char* stall_barrier =
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio";
inline constexpr const char* stall_membar =
    "smsp__average_warps_issue_stalled_membar_per_issue_active.ratio";
inline constexpr const char* stall_lg_throttle =
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio";
inline constexpr const char* stall_mio_throttle =
    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio";
inline constexpr const char* stall_short_scoreboard =
    "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio";
}  // namespace name

}  // namespace gpulab::report::metrics
