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

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cupti/cupti_check.hpp"
#include "cupti/launch_params.hpp"
#include "inject/driver_calls.hpp"
#include "reports/kernel_name.hpp"

namespace gpulab::inject {
namespace {

Injection* g_injection = nullptr;  // lives as long as the process: never destroyed

void CUPTIAPI callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                       const void* data) {
  static_cast<Injection*>(userdata)->on_callback(domain, id, data);
}

}  // namespace

void Injection::start() {
  CUpti_SubscriberParams params{CUpti_SubscriberParams_STRUCT_SIZE};
  params.subscriberName = "gpulab profile";
  char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 64] = {};
  params.oldSubscriberName = other;
  params.oldSubscriberSize = sizeof other;
  const CUptiResult r = cuptiSubscribe_v2(&subscriber_, callback, this, &params);
  if (r != CUPTI_SUCCESS) {
    refuse(r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
               ? std::string("another CUPTI client holds this process (") +
                     (other[0] ? other : "ncu, nsys, compute-sanitizer or a framework profiler") +
                     "): gpulab profile measures nothing here; run the program without it"
               : std::string("CUPTI could not be set up: ") + cupti::describe(r));
    return;
  }
  try {
    for (auto id : cupti::kDriverLaunches)
      GPULAB_CUPTI_CHECK(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, id));
    for (auto id : cupti::kRuntimeLaunches)
      GPULAB_CUPTI_CHECK(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, id));
    GPULAB_CUPTI_CHECK(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE,
                                           CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING));
    // Every NVTX call: the ranges open around each launch are in its record, filter or not; a
    // trace has each range as it closes, on the activity records' clock.
    if (tracing())
      nvtx_.on_close(
          [] {
            std::uint64_t t = 0;
            return cuptiGetTimestamp(&t) == CUPTI_SUCCESS ? t : 0;
          },
          [this](report::RecordedRange&& r) {
            r.pid = ::getpid();
            file_.write(report::to_line(r));
          });
    GPULAB_CUPTI_CHECK(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_NVTX));
    if (replaying()) enable_session_ending_calls();
    if (config_.profiler_api_range)
      for (auto id :
           {CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop})
        GPULAB_CUPTI_CHECK(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, id));
    cupti::deliver_activities_to([this](cupti::Collected&& got) { on_activities(std::move(got)); });
    kinds_.emplace();
    kinds_->enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (tracing()) {
      kinds_->enable(CUPTI_ACTIVITY_KIND_MEMCPY);
      kinds_->enable(CUPTI_ACTIVITY_KIND_MEMSET);
      // Inside cuInit, before any context, CUPTI 13.0 refuses the unified-memory records with
      // CUPTI_ERROR_NOT_READY (seen on the H200): they are enabled when the first context is.
      if (cupti::configure_unified_memory() == CUPTI_SUCCESS &&
          kinds_->try_enable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER) == CUPTI_ERROR_NOT_READY)
        GPULAB_CUPTI_CHECK(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE,
                                               CUPTI_CBID_RESOURCE_CONTEXT_CREATED));
    }
  } catch (const std::exception& e) {
    refuse(std::string("CUPTI could not be set up: ") + e.what());
    return;
  }
  file_.open();  // a process that launches nothing is in the report too
}

void Injection::enable_session_ending_calls() {
  ending_calls_.assign(CUPTI_DRIVER_TRACE_CBID_SIZE, false);
  for (std::uint32_t id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; ++id) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, id, &name) != CUPTI_SUCCESS || !name ||
        !(batching() ? ends_a_batch(name) : ends_a_session(name)))
      continue;
    GPULAB_CUPTI_CHECK(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, id));
    ending_calls_[id] = true;
  }
}

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
    if (id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
      context_ending(static_cast<const CUpti_ResourceData*>(data)->context);
    if (id == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) unified_memory_records_late();
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

void Injection::at_exit() {
  if (exit_pid_ == ::getpid()) return;  // registered once, runs once per process
  exit_pid_ = ::getpid();
  close_session_of(nullptr);
  if (subscriber_ && refused_.empty()) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  file_.write(tally_.take_lines(::getpid()) + report::end_line(::getpid()));
}

}  // namespace gpulab::inject

namespace {

// Sets gpulab up in this process, once: from the first of the program's cuInit and NVTX calls,
// which may come on two threads at once, or one inside the other (CUPTI's own set-up may
// initialize the driver): the first call does it, any other returns at once.
void start_injection() {
  using gpulab::inject::g_injection;
  static std::atomic<bool> started{false};
  if (started.exchange(true)) return;
  const char* text = std::getenv(gpulab::report::kInjectionConfigVariable);
  if (!text) return;  // loaded without gpulab profile: stay out of the way
  try {
    g_injection = new gpulab::inject::Injection(gpulab::report::injection_config_from_json(text));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpulab: the profile settings are unusable: %s\n", e.what());
    return;
  }
  pthread_atfork([] { g_injection->before_fork(); }, [] { g_injection->after_fork_in_parent(); },
                 [] { g_injection->after_fork_in_child(); });
  std::atexit([] { g_injection->at_exit(); });
  g_injection->start();
}

}  // namespace

// The driver calls this once, from the program's first cuInit; 1 means the tool is in place.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  start_injection();
  return 1;
}

// NVTX calls this from the program's first NVTX call (NVTX_INJECTION64_PATH names this library),
// which may come before any CUDA call: gpulab starts then, so that ranges pushed before the first
// kernel are known, and hands NVTX to CUPTI, which delivers each call to gpulab's subscriber.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    const void* get_export_table) {
  start_injection();
  // NVTX unloads a library whose initialization fails; gpulab's exit handler lives here.
  Dl_info self{};
  if (::dladdr(reinterpret_cast<const void*>(&start_injection), &self) && self.dli_fname)
    ::dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
  // CUPTI's own entry point of the same name, looked up in libcupti itself, not in this library.
  Dl_info cupti{};
  if (!::dladdr(reinterpret_cast<const void*>(&cuptiSubscribe_v2), &cupti) || !cupti.dli_fname)
    return 0;
  void* library = ::dlopen(cupti.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (!library) return 0;
  using Entry = int (*)(const void*);
  const auto entry = reinterpret_cast<Entry>(::dlsym(library, "InitializeInjectionNvtx2"));
  const int ready = entry ? entry(get_export_table) : 0;
  ::dlclose(library);
  return ready;
}
