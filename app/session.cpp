#include "app/session.hpp"

#include "app/device.hpp"
#include "cupti/activity_tracer.hpp"
#include "cupti/cubin_store.hpp"
#include "cupti/launch_recorder.hpp"
#include "cupti/pc_sampling.hpp"
#include "cupti/range_profiler.hpp"
#include "cupti/sass_metrics.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/report.hpp"

namespace gpulab::app {

Session::Session(int device_index) : device_index_(device_index) {}

Session::~Session() = default;

void Session::remember(const report::Report& report) {
  last_report_ = std::make_unique<report::Report>(report);
}

const report::DeviceInfo& Session::device() {
  if (broken_) throw NoGpuError(*broken_);
  if (!device_) {
    auto info = open_device(device_index_);
    info.cupti_version = cupti::api_version();
    info.roofs = measure_roofs(info);
    device_ = std::move(info);
  }
  return *device_;
}

cupti::RangeProfiler* Session::profiler(const std::vector<std::string>& metrics,
                                        std::string& why_not) {
  device();
  if (counters_unavailable_) {
    why_not = *counters_unavailable_;
    return nullptr;
  }
  pause_sampling();  // counters are read with warp-stall sampling off
  if (profiler_ && profiler_metrics_ == metrics) return profiler_.get();
  profiler_.reset();  // one profiler per context at a time
  try {
    profiler_ = std::make_unique<cupti::RangeProfiler>(device_index_, metrics);
    profiler_metrics_ = metrics;
    device_->chip = profiler_->chip();
    device_->counters_available = true;
    return profiler_.get();
  } catch (const cupti::CountersUnavailable& e) {
    counters_unavailable_ = e.what();
    device_->counters_available = false;
    device_->counters_unavailable_reason = e.what();
    why_not = e.what();
    return nullptr;
  }
}

cupti::ActivityTracer* Session::tracer(std::string& why_not) {
  device();
  if (!tracer_ && !tracing_unavailable_) {
    try {
      tracer_ = std::make_unique<cupti::ActivityTracer>();
    } catch (const ApiError& e) {
      tracing_unavailable_ = std::string("activity tracing is unavailable: ") + e.what();
    }
  }
  if (tracing_unavailable_) why_not = *tracing_unavailable_;
  return tracer_.get();
}

cupti::LaunchRecorder* Session::launch_recorder() {
  device();
  if (!recorder_ && !recorder_unavailable_) {
    try {
      recorder_ = std::make_unique<cupti::LaunchRecorder>();
    } catch (const Error&) {
      recorder_unavailable_ = true;  // the runtime still names the labs' own kernels
    }
  }
  return recorder_.get();
}

cupti::CubinStore* Session::cubins() {
  if (!cubins_) {
    cupti::LaunchRecorder* recorder = launch_recorder();
    if (!recorder) return nullptr;
    cubins_ = std::make_unique<cupti::CubinStore>();
    recorder->capture_cubins(*cubins_);
  }
  return cubins_.get();
}

cupti::SassMetrics* Session::sass_metrics(std::string& why_not) {
  device();
  if (!sass_metrics_ && !sass_unavailable_) {
    try {
      sass_metrics_ = std::make_unique<cupti::SassMetrics>(device_index_);
    } catch (const Error& e) {
      sass_unavailable_ = e.what();
    }
  }
  if (sass_unavailable_) why_not = *sass_unavailable_;
  return sass_metrics_.get();
}

cupti::PcSampler* Session::pc_sampler(std::string& why_not) {
  device();
  if (!pc_sampler_ && !sampling_unavailable_) {
    try {
      pc_sampler_ = std::make_unique<cupti::PcSampler>();
    } catch (const Error& e) {
      sampling_unavailable_ = e.what();
    }
  }
  if (sampling_unavailable_) why_not = *sampling_unavailable_;
  return pc_sampler_.get();
}

void Session::pause_sampling() {
  if (pc_sampler_) pc_sampler_->pause();
}

void Session::resume_sampling() {
  if (!pc_sampler_) return;
  try {
    pc_sampler_->resume();
  } catch (const Error&) {
  }
}

void Session::note_error(const Error& error) {
  const auto* api = dynamic_cast<const ApiError*>(&error);
  if (api && api->api() == "CUDA" && is_sticky_cuda_error(api->status())) {
    broken_ = "the CUDA context is unusable after an earlier error (" + std::string(error.what()) +
              "); restart gpulab";
  }
}

void Session::probe_counters() {
  std::string why_not;
  if (profiler_) return;
  try {
    profiler({report::metrics::name::duration}, why_not);
  } catch (const LibraryMissing& e) {
    // `info` says so rather than failing; a command that needs counters fails on its own.
    device_->counters_available = false;
    device_->counters_unavailable_reason = e.what();
  }
}

std::optional<std::vector<std::string>> Session::unsupported_metrics(
    const std::vector<std::string>& names) {
  std::vector<std::string> unknown;
  for (const auto& n : names)
    if (!metric_supported_.count(n)) unknown.push_back(n);
  if (!unknown.empty()) {
    probe_counters();
    if (!profiler_) return std::nullopt;
    for (const auto& n : unknown) metric_supported_[n] = true;
    for (const auto& n : profiler_->unsupported(unknown)) metric_supported_[n] = false;
  }
  std::vector<std::string> out;
  for (const auto& n : names)
    if (!metric_supported_.at(n)) out.push_back(n);
  return out;
}

}  // namespace gpulab::app
