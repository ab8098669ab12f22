// Warp-stall samples through CUPTI's PC sampling API, one kernel at a time (kernel-serialized
// collection): every 2^n cycles each SM sub-partition samples one of its warps' program counter
// and why the warp is not issuing. The result is samples per instruction by reason.
//
// The CUDA context the kernels run in must be current on the calling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "reports/source/collected.hpp"

namespace gpulab::cupti {

// The sampling period, as a power of two of cycles: 2^10 cycles is about 0.5 µs at the H100's
// and H200's 1.98 GHz, so a 100 µs kernel on 132 SMs x 4 sub-partitions gives about 100,000
// samples, hundreds for every line that holds 1% of its time.
inline constexpr int kDefaultPeriodLog2 = 10;

struct PcSamples {
  // One record per sampled instruction: source_counter::samples and "samples.<reason>" (the
  // chip's reason names without their "smsp__pcsamp_warps_issue_stalled_" prefix).
  std::vector<report::InstructionRecord> records;
  std::uint64_t period_cycles = 0;
  std::uint64_t samples = 0;  // CUPTI's total, every kernel of the work
  std::uint64_t dropped = 0;  // lost to a full hardware buffer
};

// Enabled and configured for the object's life; each `sample` is one range (start, the work,
// stop). Create it before the modules of the code to sample load: on the H100, CUPTI 13.0
// attributed no samples to the functions of a module loaded before PC sampling was first
// enabled. The stall reasons are read after enabling: CUPTI answers
// CUPTI_ERROR_INVALID_OPERATION before.
class PcSampler {
 public:
  // Samples every 2^period_log2 cycles (5 to 31). Throws CountersUnavailable
  // (cupti/range_profiler.hpp) where PC sampling is not supported.
  explicit PcSampler(int period_log2 = kDefaultPeriodLog2);
  ~PcSampler();
  PcSampler(const PcSampler&) = delete;
  PcSampler& operator=(const PcSampler&) = delete;

  // Runs `work` once and returns its samples; enables sampling again after a pause.
  PcSamples sample(const std::function<void()>& work);

  // Disables sampling until the next `sample`: the range profiler cannot read counter
  // availability while it is enabled (CUPTI_ERROR_INVALID_PARAMETER on the H100, CUPTI 13.0).
  // Samples still reach the modules that loaded while it was first enabled.
  void pause() noexcept;
  // Enables it again after a pause (nothing when enabled): modules that load from now on are
  // sampled. Throws CountersUnavailable when CUPTI refuses.
  void resume();

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace gpulab::cupti
