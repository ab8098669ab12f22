// libgpulab_inject.so: loaded into a program by the CUDA driver (CUDA_INJECTION64_PATH, set by
// `gpulab profile`), which calls InitializeInjection once, inside the program's first cuInit.
//
// In counters mode every kernel launch is seen by CUPTI's callback API; a launch that passes the
// filters (--kernel, --launch-skip, --launch-count) is profiled by kernel replay between its
// entry and its exit (CUPTI runs it once per pass, restoring its memory in between), and every
// launch's execution interval comes from the activity API. Consecutive profiled launches share
// one kernel-replay session, whose counters are read when it closes: at a launch that is not to
// be profiled (which must run outside any session), at a call that waits for the GPU or hands it
// on (a synchronize, a blocking copy, a free, a graph launch), when the session is full, and at
// the end. One session per launch costs twice as much: on the H200, 275 ms per launch of a small
// kernel against 122 ms in a session of 50 (9 passes, tests/gpu/range_profiler_test.cpp).
//
// Batch replay (--replay batch) replays the launches of a session together instead, which CUPTI
// programs the counters for once per pass rather than once per launch and pass. The program's
// own launches run untouched and unserialized; each is copied (inject/launch_copy.hpp). When the
// session closes, at any driver call other than a launch or a harmless query, gpulab saves the
// device memory as the launches left it, then, once per pass, puts back the memory saved before
// the first of them and issues the copies (user replay), and at last puts back what the launches
// left (inject/checkpoint.hpp): the program goes on from its own results. In trace
// mode nothing is replayed: the activity API records kernels, copies, memsets and unified-memory
// migrations. Each record is written as it is complete (inject/record_file.hpp), so that a program
// that crashes leaves what came before. A launch is recorded one by one when it is profiled or
// among its function's first 256; the others are tallied per function (reports/launch_tally.hpp),
// so that a program of millions of launches leaves records of a bounded size.
//
// Nothing here may end the program because of gpulab: a failure is written as a record (or to
// stderr) and the program runs on untouched. The one exception is the watchdog.
#include "inject/injection.hpp"

#include <unistd.h>

#include <mutex>
#include <regex>
#include <string>

#include "cupti/launch_params.hpp"
#include "reports/kernel_name.hpp"

namespace gpulab::inject {

void Injection::on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
  if (t_in_callback) return;
  t_in_callback = true;
  struct Leave {
    ~Leave() { t_in_callback = false; }
  } leave;
  if (domain == CUPTI_CB_DOMAIN_NVTX) {
    nvtx_.on_call(id, *static_cast<const CUpti_NvtxData*>(data));
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && (id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart ||
                                               id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)) {
    on_profiler_call(id, *static_cast<const CUpti_CallbackData*>(data));
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && id < ending_calls_.size() && ending_calls_[id]) {
    const auto& call = *static_cast<const CUpti_CallbackData*>(data);
    if (call.callbackSite == CUPTI_API_ENTER && t_launch.depth == 0 && session_open_) {
      std::lock_guard<std::mutex> lock(profile_mutex_);
      close_session();
    }
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    const auto& resource = *static_cast<const CUpti_ResourceData*>(data);
    if (id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) context_ending(resource.context);
    if (id == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
      if (tracing()) unified_memory_records_late();
      if (config_.source) start_sampling(resource.context);
    }
    if (id == CUPTI_CBID_RESOURCE_MODULE_LOADED && config_.source) {
      const auto* module =
          static_cast<const CUpti_ModuleResourceData*>(resource.resourceDescriptor);
      if (module) cubins_.add(module->pCubin, module->cubinSize);
    }
    return;
  }
  const auto& info = *static_cast<const CUpti_CallbackData*>(data);
  if (info.callbackSite == CUPTI_API_ENTER) {
    if (t_launch.depth++ == 0) {
      launch_entry(domain, id, info);
      // Decided at the entry: the kernel's duration may arrive before the launch call returns.
      RecordedLaunch& r = t_launch.record;
      t_launch.in_full =
          tally_.record_in_full(r.mangled_name, r.matched, r.profiled, r.correlation_id);
      // Only a launch recorded one by one keeps its ranges: the others are tallied without.
      if (t_launch.in_full && nvtx_.seen()) r.nvtx = nvtx_.path_now();
    } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
      // The driver launch inside a runtime launch: where its CUfunction is known, and the shape
      // of the launches whose runtime parameters do not give it (__cudaLaunchKernel).
      RecordedLaunch& r = t_launch.record;
      if (r.grid[0] == 0) {
        const cupti::LaunchRecord shape = cupti::driver_launch(id, info.functionParams);
        for (int i = 0; i < 3; ++i) r.grid[i] = shape.grid[i], r.block[i] = shape.block[i];
        r.dynamic_shared_bytes = shape.dynamic_shared_bytes;
      }
      if (!r.attributes) read_attributes(cupti::driver_function(id, info.functionParams), r);
      if (t_launch.profiling && batching() && !t_launch.copy) copy_launch(id, info);
    }
  } else if (--t_launch.depth == 0) {
    launch_exit(info);
  }
}

// cudaProfilerStart and cudaProfilerStop (the runtime's reach the driver's): a session open at
// either closes first, as at any call that ends one.
void Injection::on_profiler_call(CUpti_CallbackId id, const CUpti_CallbackData& call) {
  if (call.callbackSite != CUPTI_API_ENTER) return;
  if (id < ending_calls_.size() && ending_calls_[id] && t_launch.depth == 0 && session_open_) {
    std::lock_guard<std::mutex> lock(profile_mutex_);
    close_session();
  }
  if (config_.profiler_api_range) capturing_ = id == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
}

// Inside the capture range and the NVTX ranges asked for.
bool Injection::in_region() const {
  return capturing_ && (nvtx_filter_.empty() || nvtx_filter_.selects(nvtx_.open_now()));
}

bool Injection::wanted(const RecordedLaunch& r) {
  if (!filter_) return true;
  std::lock_guard<std::mutex> lock(names_mutex_);
  auto [it, added] = matches_.try_emplace(r.mangled_name, false);
  if (added) it->second = std::regex_search(report::demangle(r.mangled_name), *filter_);
  return it->second;
}

void Injection::launch_entry(CUpti_CallbackDomain domain, CUpti_CallbackId id,
                             const CUpti_CallbackData& info) {
  InFlight& f = t_launch;
  const bool driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
  const cupti::LaunchRecord shape = driver ? cupti::driver_launch(id, info.functionParams)
                                           : cupti::runtime_launch(id, info.functionParams);
  RecordedLaunch& r = f.record = RecordedLaunch{};
  r.pid = ::getpid();
  r.index = launches_++;
  r.correlation_id = info.correlationId;
  r.mangled_name = info.symbolName ? info.symbolName : "(unnamed)";
  for (int i = 0; i < 3; ++i) r.grid[i] = shape.grid[i], r.block[i] = shape.block[i];
  r.dynamic_shared_bytes = shape.dynamic_shared_bytes;
  if (driver) read_attributes(cupti::driver_function(id, info.functionParams), r);
  r.matched = in_region() && wanted(r);
  f.profiling = false;
  f.copy.reset();
  f.not_copied = "the launch reached no driver launch call";
  if (!replaying()) return;

  std::unique_lock<std::mutex> serialized(profile_mutex_);
  if (!r.matched || matched_++ < config_.launch_skip ||
      (config_.launch_count > 0 && profiled_ >= config_.launch_count)) {
    close_session();  // a launch not to be profiled runs outside any session
    return;
  }
  ++profiled_;
  r.profiled = true;
  if (session_ && session_->context != info.context) close_session();  // a session per context
  try {
    if (!session_) open_session(info.context);
  } catch (const std::exception& e) {
    r.error = e.what();
    return;
  }
  f.profiling = true;
  f.serialized = std::move(serialized);
  if (!batching()) {
    watchdog_.arm(r.index, r.mangled_name);
  } else if (driver) {
    copy_launch(id, info);
  }
}

}  // namespace gpulab::inject
