// Hardware counters through CUPTI's Range Profiler and Profiler Host API (CUDA 13).
//
// A metric set needs several passes: one pass can only read so many hardware counters. Both
// ways to collect them use auto range, which makes every kernel launched between Start and
// Stop one range ("0", "1", ... in launch order) that covers that kernel alone, so durations
// and the `pct_of_peak_sustained_elapsed` throughputs are the kernel's own. They differ in who
// replays the work once per pass:
//
// - replay_kernels (user replay): gpulab runs the whole launch sequence once per pass and
//   calls `before_pass` ahead of each (outside the ranges): an L2 flush there gives every pass
//   the cold caches ncu's default --cache-control all gives. The sequence must be repeatable
//   (each launch recomputes its whole output), which the lab contract requires.
// - profile_kernels (kernel replay): CUPTI serializes the kernels and replays each one once per
//   pass, saving the device memory it may touch first and restoring it in between. Any launch
//   sequence works, but nothing runs between passes (CUPTI 13.0 has no cache control), and the
//   restore leaves L2 full of dirty lines: measured on the H200, a kernel that writes a few
//   bytes shows 20-30 MB of DRAM writes, which are the restore's write-backs.
//
// Lifecycle (RAII):
//   RangeProfiler p(device, metrics);   // init, chip, availability, config image, Enable
//   p.replay_kernels(...) / p.profile_kernels(...)   // any number of times, in any order
//   // ~RangeProfiler: Disable, host deinit, profiler deinit
//
// The CUDA context the kernels run in must be current on the calling thread.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "reports/base/errors.hpp"

namespace gpulab::cupti {

// Counters cannot be read here: insufficient privileges, another profiler holding the
// hardware, an unsupported device or configuration. The message gives the cause and remedy.
class CountersUnavailable : public Error {
 public:
  explicit CountersUnavailable(const std::string& message) : Error(ExitCode::no_gpu, message) {}
};

struct RangeValues {
  std::string range_name;                // "0", "1", ... in launch order
  std::map<std::string, double> values;  // metric name -> value; NaN values are left out
};

// CUPTI's API version (e.g. 130001); needs no GPU. 0 when libcupti cannot be loaded (this
// loads it: see cupti/cupti_library.hpp).
int api_version();

class RangeProfiler {
 public:
  RangeProfiler(int device, std::vector<std::string> metrics);
  ~RangeProfiler();
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  const std::string& chip() const { return chip_; }
  int passes() const { return passes_; }
  const std::vector<std::string>& metrics() const { return metrics_; }

  // What user replay runs around the work of each pass.
  struct PassHooks {
    std::function<void()> before_pass;  // before the pass's session starts (outside any range)
    // Launches exactly one kernel (and waits for it) as the first of the pass, inside the
    // session; its range is left out of the results. An L2 flush belongs here rather than in
    // before_pass: starting a session leaves dirty lines in L2 (measured on the H200: ~26 MB,
    // written back during the next kernel), and only a flush after the start evicts them.
    std::function<void()> first_kernel;
    std::function<void(int, int)> on_pass;  // (k, n) before pass k of n, for progress
  };

  // User replay: runs the hooks and `launch_kernels` (which must leave the device idle) once
  // per pass until CUPTI has every pass; returns one RangeValues per kernel `launch_kernels`
  // launched in one pass, in launch order. Up to kSpareRanges kernels beyond
  // `expected_kernels` are kept; dropped() says how many more were lost.
  std::vector<RangeValues> replay_kernels(const std::function<void()>& launch_kernels,
                                          std::size_t expected_kernels, const PassHooks& hooks);

  // Kernel replay: runs `launch_kernels` (which may synchronize) once and returns one
  // RangeValues per kernel it launched, in launch order, with spare ranges as above.
  std::vector<RangeValues> profile_kernels(const std::function<void()>& launch_kernels,
                                           std::size_t expected_kernels);

  // Kernel replay around launches made by code the caller does not control (the injection
  // library's launch callbacks): begin at a launch's entry, end at its exit, which returns what
  // profile_kernels would. abandon ends a begun batch without results (the launch failed).
  void begin_kernel_replay(std::size_t expected_kernels);
  std::vector<RangeValues> end_kernel_replay();
  void abandon_kernel_replay() noexcept;

  // The metrics of `names` that this chip's CUPTI does not know (checked one by one).
  std::vector<std::string> unsupported(const std::vector<std::string>& names) const;

  // Ranges the last batch could not store.
  std::size_t dropped() const { return dropped_; }

  static constexpr std::size_t kSpareRanges = 4;

 private:
  void configure(std::size_t max_ranges, bool user_replay);
  void start();
  bool stop();  // true when all passes have been submitted
  void stop_after_error() noexcept;
  std::vector<RangeValues> decode();

  struct Impl;
  class BatchScope;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<BatchScope> open_batch_;  // between begin_ and end_kernel_replay
  std::vector<std::string> metrics_;
  std::string chip_;
  int passes_ = 0;
  std::size_t dropped_ = 0;
};

}  // namespace gpulab::cupti
