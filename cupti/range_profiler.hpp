// Hardware counters through CUPTI's Range Profiler and Profiler Host API (CUDA 13).
//
// Mode: auto range + kernel replay. Every kernel launched between Start and Stop becomes one
// range ("0", "1", ... in launch order); CUPTI serializes the kernels and, for each one, saves
// the device memory it may touch, runs it once per pass (a metric set needs several passes:
// the counters of one pass are limited by the hardware), and restores memory between passes.
// So results are exact per kernel but each profiled kernel runs `passes()` times, and caches
// are not flushed between passes (CUPTI 13.0 offers no cache control; ncu flushes by default).
//
// Lifecycle (RAII):
//   RangeProfiler p(device, metrics);   // init, chip, availability, config image, Enable
//   auto ranges = p.profile(launch_all, n_kernels);   // any number of times
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

  // Runs `launch_kernels`, which must launch exactly `kernels` kernels and may synchronize,
  // under the profiler; returns one RangeValues per kernel in launch order. Throws ApiError if
  // CUPTI dropped ranges or saw a different number of kernels.
  std::vector<RangeValues> profile(const std::function<void()>& launch_kernels,
                                   std::size_t kernels);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<std::string> metrics_;
  std::string chip_;
  int passes_ = 0;
};

}  // namespace gpulab::cupti
