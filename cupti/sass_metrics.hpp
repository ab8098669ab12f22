// Per-instruction counters through CUPTI's SASS metrics API: the kernel's code is patched (at
// its first launch while enabled) to count, per SASS instruction, warp and thread instructions
// executed, the global sectors and requests, the shared wavefronts and requests and the local
// loads and stores of memory instructions.
//
// Patching changes the code and its timing: never take durations from a patched run. The
// CUDA context the kernels run in must be current on the calling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "reports/source/collected.hpp"

namespace gpulab::cupti {

// Configured for the whole object's life: on the H100, CUPTI 13.0 refused a second
// configuration in one process (CUPTI_ERROR_OUT_OF_MEMORY) after the first was unset; collect
// as many times as needed from one object.
class SassMetrics {
 public:
  // Chooses the chip's metrics for gpulab's counters (report::source_counter) and configures
  // them. Throws CountersUnavailable (cupti/range_profiler.hpp) where the device cannot be
  // patched.
  explicit SassMetrics(int device);
  ~SassMetrics();
  SassMetrics(const SassMetrics&) = delete;
  SassMetrics& operator=(const SassMetrics&) = delete;

  // The counters left out because the chip lists no metric for them ("shared_wavefronts").
  const std::vector<std::string>& left_out() const { return left_out_; }
  // The chip's metric behind each counter collected, as "inst_executed: smsp__sass_inst_executed".
  const std::vector<std::string>& chosen() const { return chosen_; }

  // Runs `work` once with the code patched; one record per instruction of every function it
  // ran, its counters by gpulab's names.
  std::vector<report::InstructionRecord> collect(const std::function<void()>& work);

 private:
  int device_;
  std::string chip_;
  bool configured_ = false;
  std::vector<std::string> left_out_, chosen_;
  struct Metric {
    std::uint64_t id;
    std::string counter;  // gpulab's name; several metrics may add up to one counter
  };
  std::vector<Metric> metrics_;
};

}  // namespace gpulab::cupti
