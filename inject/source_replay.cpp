// --source: per-instruction counters and warp-stall samples of each profiled function's first
// profiled launch. After a batch's counter passes, its copies run twice more from the memory
// saved before the first: once with the code patched to count per instruction
// (cupti/sass_metrics.hpp), once with PC sampling on (cupti/pc_sampling.hpp); the lines come
// from the cubins captured as their modules loaded. Neither run is timed, and neither is the
// program's: the program goes on from the memory its own launches left (batch_replay.cpp).
#include <unistd.h>

#include <exception>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cupti/kernel_source.hpp"
#include "inject/injection.hpp"
#include "reports/source_records.hpp"

namespace gpulab::inject {

// At the context's creation, before any of its modules loads: CUPTI attributes samples only to
// the modules that load while sampling is enabled (seen on the H100, CUPTI 13.0), and gpulab
// profile --source has the program load its modules eagerly, with the context. Enabled, it
// serializes the program's launches and the range profiler cannot be set up: the first session
// pauses it (open_session), and from then on it runs only in the sampled replays.
void Injection::start_sampling(CUcontext context) {
  if (sampler_ || !sampling_unavailable_.empty()) return;
  if (cuCtxPushCurrent(context) != CUDA_SUCCESS) {
    sampling_unavailable_ = "the new context could not be made current";
    return;
  }
  try {
    sampler_ = std::make_unique<cupti::PcSampler>();
  } catch (const std::exception& e) {
    sampling_unavailable_ = e.what();
  }
  CUcontext popped = nullptr;
  cuCtxPopCurrent(&popped);
}

// With the session's context current, after its counter passes. `run_copies` replays the
// session's copies from the memory saved before the first, in order (later launches read what
// earlier ones wrote).
void Injection::collect_sources(Session& s, const std::function<void()>& run_copies) {
  std::map<std::string, std::int64_t> first;  // function -> its first launch in the session
  std::map<std::string, int> launches;
  for (std::size_t i = 0; i < s.names.size(); ++i) {
    if (sourced_.count(s.names[i])) continue;
    first.emplace(s.names[i], s.launches[i]);
    ++launches[s.names[i]];
  }
  if (first.empty()) return;

  std::vector<std::string> notes;
  std::vector<report::InstructionRecord> counted;
  if (!sass_ && sass_unavailable_.empty()) {
    CUdevice device = 0;
    try {
      if (cuCtxGetDevice(&device) != CUDA_SUCCESS)
        throw std::runtime_error("the session's device is unknown");
      sass_ = std::make_unique<cupti::SassMetrics>(static_cast<int>(device));
    } catch (const std::exception& e) {
      sass_unavailable_ = e.what();
    }
  }
  if (sass_) {
    try {
      counted = sass_->collect(run_copies);
    } catch (const std::exception& e) {
      notes.push_back(std::string("per-instruction counters not collected: ") + e.what());
    }
    if (!sass_->left_out().empty()) {
      std::string names;
      for (const auto& n : sass_->left_out()) names += (names.empty() ? "" : ", ") + n;
      notes.push_back("per-instruction counters: this GPU's CUPTI offers none for " + names);
    }
  } else {
    notes.push_back("per-instruction counters not collected: " + sass_unavailable_);
  }
  std::optional<cupti::PcSamples> sampled;
  if (sampler_) {
    try {
      sampled = sampler_->sample(run_copies);
    } catch (const std::exception& e) {
      notes.push_back(std::string("warp-stall samples not taken: ") + e.what());
    }
    sampler_->pause();  // the next session's counters are read with sampling off
  } else {
    notes.push_back("warp-stall samples not taken: " +
                    (sampling_unavailable_.empty()
                         ? std::string("sampling was not started with the context")
                         : sampling_unavailable_));
  }

  for (const auto& [function, launch] : first) {
    sourced_.insert(function);  // tried once: a function that gave nothing is not replayed again
    auto source = cupti::kernel_source(function, counted, sampled, &cubins_, notes);
    if (!source) continue;  // the report names the functions without one
    if (launches[function] > 1)
      source->notes.push_back("this function ran " + std::to_string(launches[function]) +
                              " times in the replayed batch: its counters are those of every "
                              "launch");
    s.source_lines += report::to_lines(::getpid(), launch, *source);
  }
}

}  // namespace gpulab::inject
