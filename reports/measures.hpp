// What the harness measures of one variant (its check against the CPU reference, its timing,
// its kernel's static attributes) and the work a lab declares it does: the part of the report
// model (reports/report.hpp) that labs/ fills, on its own so that the labs build against it alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpulab::report {

// A lab's variants are baselines, optimized versions and library references; a profiled
// program's variants are its kernel functions.
enum class Role { baseline, optimized, reference, function };

struct WorkModel {
  double bytes_read = 0;     // fewest DRAM bytes the computation must read
  double bytes_written = 0;  // fewest DRAM bytes it must write
  double flops = 0;
  // A collective across GPUs (the nccl lab): the bytes each GPU contributes to it, as nccl-tests
  // count them (the message size), and how many GPUs take part. 0 when there is none.
  double collective_bytes = 0;
  int ranks = 0;
  double bytes() const { return bytes_read + bytes_written; }
};

enum class CheckStatus { passed, failed, skipped };

struct Check {
  CheckStatus status = CheckStatus::skipped;
  double max_abs_error = 0;
  double max_rel_error = 0;  // relative to max |reference|
  double tolerance_abs = 0;  // an element passes when |got-ref| <= abs + rel * |ref|
  double tolerance_rel = 0;
  std::uint64_t elements = 0;
  std::uint64_t mismatches = 0;  // elements outside tolerance, NaN included
  std::string message;           // why it failed or was skipped; first mismatch
};

// What ended a timing: its fixed count of launches (--repeat), or adaptive timing's stopping
// rule (--max-noise, reports/noise_stop.hpp): the samples' noise fell below the target, it
// settled above the target, or the timeout came first.
enum class TimingStop { count, noise, settled, timeout };

struct TimingStats {
  int warmup = 0;
  int repeat = 0;        // timed launches, every one of them in the statistics below
  bool cold_l2 = false;  // L2 flushed before every timed repetition
  // Seconds, in measurement order: all of them up to kKeptSamples (reports/statistics.hpp),
  // else that many, evenly spaced.
  std::vector<double> samples;
  double median = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  double stddev = 0;
  TimingStop stopped = TimingStop::count;
};

struct StaticAttributes {
  int registers_per_thread = 0;
  std::uint64_t local_bytes_per_thread = 0;
  std::uint64_t static_shared_bytes = 0;
  std::uint64_t dynamic_shared_bytes = 0;
  int block_threads = 0;
  std::uint64_t grid_blocks = 0;
  int max_active_blocks_per_sm = 0;
  double theoretical_occupancy = 0;  // fraction of the SM's warp slots
  // What ptxas reported when it compiled the kernel (`-Xptxas -v`, captured at build time);
  // absent for kernels the build has no record of (libraries' kernels).
  std::optional<int> spill_store_bytes;
  std::optional<int> spill_load_bytes;
  std::optional<int> stack_frame_bytes;
};

const char* to_string(Role role);
const char* to_string(CheckStatus status);
const char* to_string(TimingStop stop);
std::optional<Role> role_from_string(const std::string& s);
std::optional<CheckStatus> check_status_from_string(const std::string& s);
std::optional<TimingStop> timing_stop_from_string(const std::string& s);

}  // namespace gpulab::report
