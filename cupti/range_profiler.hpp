// Hardware counters through CUPTI's Range Profiler and Profiler Host API (CUDA 13).
//
// A metric set needs several passes: one pass can only read so many hardware counters. Two
// ways to replay the work once per pass:
//
// - profile_kernels: auto range + kernel replay. Every kernel launched between Start and Stop
//   becomes one range ("0", "1", ... in launch order). CUPTI serializes the kernels and, for
//   each, saves the device memory it may touch, runs it once per pass and restores memory in
//   between. Per-kernel results for any launch sequence, but nothing can run between passes, so
//   caches stay as the previous pass left them (CUPTI 13.0 has no cache control): data that
//   fits in L2 is read from L2, and DRAM bytes understate what a cold launch moves.
// - profile_ranges: user range + user replay. gpulab replays each named range itself, once
//   per pass, and runs `before_each` (an L2 flush) before each one, the way ncu's default
//   --cache-control all does. The work in a range must be repeatable (each launch recomputes
//   its whole output); a range covering several kernels reports their sum.
//
// Lifecycle (RAII):
//   RangeProfiler p(device, metrics);   // init, chip, availability, config image, Enable
//   p.profile_kernels(...) / p.profile_ranges(...)   // any number of times, in any order
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

#include "reports/errors.hpp"

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

// CUPTI's API version (e.g. 130001); needs no GPU.
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

  // Kernel replay: runs `launch_kernels` (which may synchronize) once and returns one
  // RangeValues per kernel it launched, in launch order. Up to kSpareRanges kernels beyond
  // `expected_kernels` are kept; dropped() says how many more were lost.
  std::vector<RangeValues> profile_kernels(const std::function<void()>& launch_kernels,
                                           std::size_t expected_kernels);

  struct UserRange {
    std::string name;
    std::function<void()> launch;  // enqueues the range's work (repeatable)
  };
  // User replay: runs every range once per pass, `before_each` ahead of each range (outside
  // it), and `on_pass(k, n)` before pass k of n (for progress); returns one RangeValues per
  // range, in order.
  std::vector<RangeValues> profile_ranges(const std::vector<UserRange>& ranges,
                                          const std::function<void()>& before_each,
                                          const std::function<void(int, int)>& on_pass = {});

  // The metrics of `names` that this chip's CUPTI does not know (checked one by one).
  std::vector<std::string> unsupported(const std::vector<std::string>& names) const;

  // Ranges the last batch could not store.
  std::size_t dropped() const { return dropped_; }

  static constexpr std::size_t kSpareRanges = 32;

 private:
  void configure(std::size_t max_ranges, bool user_replay);
  void start();
  bool stop();  // true when all passes have been submitted
  void stop_after_error() noexcept;
  std::vector<RangeValues> decode();

  struct Impl;
  class BatchScope;
  std::unique_ptr<Impl> impl_;
  std::vector<std::string> metrics_;
  std::string chip_;
  int passes_ = 0;
  std::size_t dropped_ = 0;
};

}  // namespace gpulab::cupti
