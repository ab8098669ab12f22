// What every lab run needs around its kernels: timing with CUDA events, an L2 flush for cold
// timings, output poisoning, and the static attributes of a kernel.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "labs/harness/check.hpp"
#include "labs/harness/device_buffer.hpp"
#include "labs/harness/lab.hpp"
#include "reports/measures.hpp"
#include "reports/noise_stop.hpp"

namespace gpulab::labs {

// Evicts L2 by reading a buffer twice its size with a small kernel. Used outside CUDA events
// (cold timing) and as the first kernel of every counter replay pass, whose range the profiler
// leaves out; never inside kernel replay, where it would be replayed as a kernel of its own.
class L2Flusher {
 public:
  explicit L2Flusher(std::size_t l2_bytes);
  void flush(cudaStream_t stream);

 private:
  DeviceBuffer<uint4> buffer_;
  DeviceBuffer<unsigned> sink_;
  int blocks_ = 0;
};

// Times `launch` with a pair of CUDA events around each repetition, after `warmup` untimed
// launches. With a flusher, L2 is flushed before each timed repetition (outside the events).
// With `prepare`, every launch waits for the previous one to finish and for prepare() (also
// outside the events); without, the repetitions are queued back to back.
report::TimingStats time_launches(const std::function<void(cudaStream_t)>& launch,
                                  cudaStream_t stream, int warmup, int repeat, L2Flusher* flusher,
                                  const std::function<void()>& prepare = {});

// Times `launch` as time_launches does, but until adaptive timing's rule stops
// (reports/noise_stop.hpp): batches of launches queued back to back (each after prepare() where
// given), read after each batch, until the samples' relative noise is below the rule's target
// or its timeout has passed since the warm-up ended. Records which of the two it was.
report::TimingStats time_until_quiet(const std::function<void(cudaStream_t)>& launch,
                                     cudaStream_t stream, int warmup, const report::NoiseRule& rule,
                                     L2Flusher* flusher, const std::function<void()>& prepare = {});

// Fills `bytes` bytes with 0xFF: as float, a NaN that no correct kernel writes.
void poison(void* ptr, std::size_t bytes, cudaStream_t stream);

// The check of a result of floats: copies ref.size() of them from device memory at `result`
// (waiting for the device) and compares them with the CPU reference `ref` (labs/harness/check.hpp).
report::Check check_result(const float* result, const std::vector<float>& ref, Tolerance tol);

// Registers, local memory, shared memory and theoretical occupancy of one launch (all zero
// when the launch has no function pointer).
report::StaticAttributes static_attributes(const KernelLaunch& launch, int max_warps_per_sm);

// The function's mangled name as the runtime knows it (cudaFuncGetName); empty when the launch
// has no function pointer (a library's kernel).
std::string mangled_name(const KernelLaunch& launch);

// Throws UsageError when `bytes` more device memory would not fit in what is free now.
void require_device_memory(std::size_t bytes, const char* what);

}  // namespace gpulab::labs
