// The Session owns what outlives one command: the device and its primary context, the measured
// roofs and the CUPTI profiler. All of it is created on first use, so commands that need no
// GPU (list, compare, diagnose --report) never touch the driver, and the interactive shell
// pays for each only once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reports/base/errors.hpp"
#include "reports/device_info.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::cupti {
class ActivityTracer;
class CubinStore;
class LaunchRecorder;
class PcSampler;
class RangeProfiler;
class SassMetrics;
}

namespace gpulab::app {

class Session {
 public:
  explicit Session(int device_index = 0);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Opens the device on first call (NoGpuError when there is none) and measures the copy
  // roof; later calls return the cached result.
  const report::DeviceInfo& device();

  // A profiler for exactly these metrics, built on first request and cached. When counters
  // cannot be read it returns nullptr and `why_not` holds the cause and the remedy; the device
  // info records that too.
  cupti::RangeProfiler* profiler(const std::vector<std::string>& metrics, std::string& why_not);

  // The activity tracer, set up on first request and kept. When tracing cannot be set up it
  // returns nullptr and `why_not` says why (later requests give the same answer).
  cupti::ActivityTracer* tracer(std::string& why_not);

  // The launch recorder (CUPTI callbacks), set up on first request and kept; nullptr when
  // another CUPTI client holds the callbacks (under ncu, nsys, compute-sanitizer), or when
  // libcupti cannot be loaded (a run without counters or timeline, which does not need it).
  cupti::LaunchRecorder* launch_recorder();

  // The cubins of the modules loaded from the first call on (for per-instruction data: see
  // cupti/cubin_store.hpp), captured by the launch recorder; nullptr without one.
  cupti::CubinStore* cubins();

  // Per-instruction counters (cupti/sass_metrics.hpp), configured on first request and kept:
  // CUPTI takes one configuration per process. nullptr, with `why_not`, where unavailable.
  cupti::SassMetrics* sass_metrics(std::string& why_not);

  // The warp-stall sampler (cupti/pc_sampling.hpp), enabled on first request and kept: ask for
  // it before the modules of the code to sample load. nullptr, with `why_not`, where unavailable.
  cupti::PcSampler* pc_sampler(std::string& why_not);
  // Disables warp-stall sampling until the next sample or resume_sampling, where something else
  // needs CUPTI to itself (counters; an activity trace: CUPTI refuses to enable activity kinds
  // while sampling is enabled, CUPTI_ERROR_NOT_COMPATIBLE) or where launches are timed (enabled,
  // sampling serializes them). Both do nothing without a sampler.
  void pause_sampling();
  // Enables it again, so that modules loading now are sampled later. A failure to enable is
  // left to the next sample, which reports it.
  void resume_sampling();

  int device_index() const { return device_index_; }

  // Probes whether counters can be read at all (for `info`): a libcupti that cannot be loaded
  // is one more reason they cannot, recorded in the device info, not an error.
  void probe_counters();

  // The metrics of `names` the device's CUPTI does not support; nullopt when counters are
  // unavailable altogether.
  std::optional<std::vector<std::string>> unsupported_metrics(const std::vector<std::string>& names);

  // The last report a command produced (for the shell's `last` and `save`).
  void remember(const report::Report& report);
  const report::Report* last_report() const { return last_report_.get(); }  // nullptr: none yet

  // Called with every error a command ends with. A CUDA error that leaves the context unusable
  // (an illegal address, a kernel that faulted) marks the session broken: later GPU commands
  // fail at once with a message that says to restart.
  void note_error(const Error& error);
  const std::optional<std::string>& broken() const { return broken_; }

 private:
  int device_index_;
  std::optional<report::DeviceInfo> device_;
  std::vector<std::string> profiler_metrics_;
  std::unique_ptr<cupti::RangeProfiler> profiler_;
  std::unique_ptr<cupti::ActivityTracer> tracer_;
  std::unique_ptr<cupti::CubinStore> cubins_;  // before recorder_, which writes into it
  std::unique_ptr<cupti::LaunchRecorder> recorder_;
  std::unique_ptr<cupti::SassMetrics> sass_metrics_;
  std::unique_ptr<cupti::PcSampler> pc_sampler_;
  std::optional<std::string> sass_unavailable_, sampling_unavailable_;
  bool recorder_unavailable_ = false;
  std::optional<std::string> tracing_unavailable_;
  std::optional<std::string> counters_unavailable_;  // set once counters were found missing
  std::map<std::string, bool> metric_supported_;  // cache of unsupported_metrics
  std::unique_ptr<report::Report> last_report_;
  std::optional<std::string> broken_;
};

}  // namespace gpulab::app
