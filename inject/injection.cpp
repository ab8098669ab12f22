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
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <iterator>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include <cuda.h>
#include <cupti.h>

#include "cupti/activity_records.hpp"
#include "cupti/cupti_check.hpp"
#include "cupti/launch_params.hpp"
#include "cupti/range_profiler.hpp"
#include "inject/checkpoint.hpp"
#include "inject/counter_lock.hpp"
#include "inject/launch_copy.hpp"
#include "inject/record_file.hpp"
#include "inject/watchdog.hpp"
#include "reports/kernel_name.hpp"
#include "reports/launch_tally.hpp"
#include "reports/profile_records.hpp"

namespace gpulab::inject {
namespace {

using report::RecordedLaunch;

// The process status the watchdog ends a program with (documented in docs/profile.md).
constexpr int kWatchdogExitCode = 124;

// The most launches one kernel-replay session holds before its counters are read: a crash loses
// the counters of at most this many launches (their records are written as they return).
constexpr std::size_t kSessionLaunches = 64;

// How long a process waits for another process of the program to finish its session on the
// same GPU before it gives up profiling a launch (which then runs and is timed, unprofiled).
constexpr double kCounterTurnSeconds = 60;

// The driver calls that close an open session first (callbacks are enabled for these alone).
// Each waits for the GPU or hands work to it in a way a session must not span: the program may
// then wait on another process that needs the counters, or run kernels that are not to be
// profiled (graphs). Asynchronous forms ("...Async") neither wait nor run kernels.
constexpr std::string_view kSessionEndingCalls[] = {"cuCtxSynchronize",
                                                    "cuStreamSynchronize",
                                                    "cuEventSynchronize",
                                                    "cuStreamQuery",
                                                    "cuEventQuery",
                                                    "cuMemcpy",
                                                    "cuMemFree",
                                                    "cuCtxDestroy",
                                                    "cuDevicePrimaryCtxRelease",
                                                    "cuDevicePrimaryCtxReset",
                                                    "cuGraphLaunch",
                                                    "cuModuleUnload",
                                                    "cuLibraryUnload"};

bool starts_with_any(std::string_view name, const std::string_view* calls, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (name.substr(0, calls[i].size()) == calls[i]) return true;
  return false;
}

bool ends_a_session(std::string_view name) {
  if (name.find("Async") != std::string_view::npos) return false;
  return starts_with_any(name, std::data(kSessionEndingCalls), std::size(kSessionEndingCalls));
}

// Under batch replay every driver call ends the batch except these: launches (which join it) and
// calls that neither touch memory nor wait. A copy, a memset, an allocation, a free, a host
// function, an event or stream wait on the host all end it: the device memory saved before the
// batch is put back for each pass, so nothing that changes memory may happen inside one.
constexpr std::string_view kBatchKeepingCalls[] = {
    "cuLaunchKernel", "cuLaunchCooperativeKernel", "cuCtxGet", "cuCtxSetCurrent",
    "cuCtxPushCurrent", "cuCtxPopCurrent", "cuCtxSetLimit", "cuDeviceGet",
    "cuDeviceComputeCapability", "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxGetState",
    "cuDriverGetVersion", "cuFuncGet", "cuFuncSet", "cuKernelGet", "cuKernelSet", "cuModuleGet",
    "cuLibraryGet", "cuPointerGet", "cuStreamGet", "cuStreamIsCapturing", "cuEventRecord",
    "cuStreamWaitEvent", "cuEventCreate", "cuStreamCreate", "cuGetProcAddress", "cuGetErrorString",
    "cuGetErrorName", "cuGetExportTable", "cuOccupancy", "cuThreadExchangeStreamCaptureMode",
    "cuInit"};

bool ends_a_batch(std::string_view name) {
  return !starts_with_any(name, std::data(kBatchKeepingCalls), std::size(kBatchKeepingCalls));
}

// What one launch callback pair (entry, exit) shares on its thread. Launch calls nest (a
// runtime launch makes a driver launch): only the outermost is a launch of its own.
struct InFlight {
  int depth = 0;
  RecordedLaunch record;
  bool in_full = false;  // recorded one by one, not only tallied (reports/launch_tally.hpp)
  bool profiling = false;
  std::optional<LaunchCopy> copy;  // batch replay: the launch, copied at its driver entry
  std::string not_copied;          // why there is no copy
  std::unique_lock<std::mutex> serialized;  // held from a profiled launch's entry to its exit
};
thread_local InFlight t_launch;

// Set while this thread runs gpulab's own code in a callback: a driver call made there (the
// synchronize after a profiled launch) is gpulab's, not the program's.
thread_local bool t_in_callback = false;

// The session open in this process: its context, and the launches it holds.
struct Session {
  CUcontext context = nullptr;
  cupti::RangeProfiler* profiler = nullptr;
  std::vector<std::int64_t> launches;  // launch indices, in launch order (= range order)
  // Batch replay: each launch's copy and name, an event recorded after it on its stream (null
  // where none could be), and the device memory from before the first.
  std::vector<LaunchCopy> copies;
  std::vector<std::string> names;
  std::vector<CUevent> finished;
  std::unique_ptr<Checkpoint> before;
};

class Injection {
 public:
  explicit Injection(report::InjectionConfig config)
      : config_(std::move(config)),
        file_(config_.output_dir, [this] { return process_line(); }),
        watchdog_(config_.watchdog_seconds,
                  [this](std::int64_t index, const std::string& name, double seconds) {
                    on_watchdog(index, name, seconds);
                  }) {
    if (!config_.kernel_filter.empty())
      filter_.emplace(config_.kernel_filter, std::regex::ECMAScript);
  }

  void start();
  void on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data);
  void at_exit();

  void before_fork() { file_.lock_for_fork(); }
  void after_fork_in_parent() { file_.unlock_after_fork(); }
  void after_fork_in_child() {
    file_.unlock_after_fork();
    // The parent's: CUDA does not carry over into a forked child, whose CUPTI must not be asked
    // to free the parent's saved memory.
    if (session_ && session_->before) session_->before->forget();
    session_.reset();
    session_open_ = false;
    tally_.reset();
    launches_ = 0;
    matched_ = 0;
    profiled_ = 0;
    exit_pid_ = 0;  // the child's own end is written by its own exit
  }

 private:
  std::string process_line() const {
    report::RecordedProcess p;
    p.pid = ::getpid();
    p.parent_pid = ::getppid();
    p.mode = config_.mode;
    p.cupti_version = cupti::api_version();
    p.refused = refused_;
    return report::to_line(p);
  }

  void refuse(const std::string& why) {
    refused_ = why;
    std::fprintf(stderr, "gpulab: %s\n", why.c_str());
    file_.open();  // its first line is the process line, which now says why
  }

  void launch_entry(CUpti_CallbackDomain domain, CUpti_CallbackId id,
                    const CUpti_CallbackData& info);
  void launch_exit(const CUpti_CallbackData& info);
  void copy_launch(CUpti_CallbackId id, const CUpti_CallbackData& info);
  void batch_launch_exit(int returned);
  std::vector<cupti::RangeValues> replay_batch(Session& s);
  bool batching() const { return config_.mode == "counters" && config_.replay == "batch"; }
  bool replaying() const {
    return config_.mode == "counters" && (config_.replay == "kernel" || batching());
  }
  void read_attributes(CUfunction function, RecordedLaunch& r) const;
  void unified_memory_records_late();
  bool wanted(const RecordedLaunch& r);
  cupti::RangeProfiler* profiler_for(CUcontext context, std::string& why_not);
  void enable_session_ending_calls();
  bool open_session(CUcontext context, std::string& why_not);
  void close_session();
  void close_session_of(CUcontext context);
  void context_ending(CUcontext context);
  void on_activities(cupti::Collected&& got);
  void write_tally_when_due();
  void on_watchdog(std::int64_t index, const std::string& name, double seconds);

  report::InjectionConfig config_;
  std::optional<std::regex> filter_;
  RecordFile file_;
  report::LaunchTally tally_;
  CounterLock counter_lock_;  // held while a session is open
  bool said_unlocked_ = false;
  Watchdog watchdog_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::string refused_;
  std::optional<cupti::EnabledKinds> kinds_;
  std::vector<bool> ending_calls_;  // by driver callback id: the calls that close a session
  std::atomic<std::int64_t> launches_{0};
  std::int64_t matched_ = 0;   // under profile_mutex_
  std::int64_t profiled_ = 0;  // under profile_mutex_
  std::mutex profile_mutex_;   // one profiled launch at a time, process-wide
  std::mutex names_mutex_;
  std::map<std::string, bool> matches_;  // mangled name -> passes --kernel
  std::map<CUcontext, std::unique_ptr<cupti::RangeProfiler>> profilers_;
  std::map<CUcontext, std::string> profiler_errors_;
  std::optional<Session> session_;         // under profile_mutex_
  std::atomic<bool> session_open_{false};  // session_ has a value (read without the mutex)
  pid_t exit_pid_ = 0;
};

Injection* g_injection = nullptr;  // lives as long as the process: never destroyed

void CUPTIAPI callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                       const void* data) {
  static_cast<Injection*>(userdata)->on_callback(domain, id, data);
}

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
    if (replaying()) enable_session_ending_calls();
    cupti::deliver_activities_to([this](cupti::Collected&& got) { on_activities(std::move(got)); });
    kinds_.emplace();
    kinds_->enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (config_.mode == "trace") {
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
      const RecordedLaunch& r = t_launch.record;
      t_launch.in_full =
          tally_.record_in_full(r.mangled_name, r.matched, r.profiled, r.correlation_id);
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

// The unified-memory records CUPTI would not enable before a context existed: once, at the first
// context. A second refusal leaves the trace without migrations, and the process says why.
void Injection::unified_memory_records_late() {
  static std::once_flag once;
  std::call_once(once, [this] {
    cuptiEnableCallback(0, subscriber_, CUPTI_CB_DOMAIN_RESOURCE,
                        CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
    const CUptiResult r = kinds_->try_enable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
    if (r != CUPTI_SUCCESS)
      std::fprintf(stderr, "gpulab: no unified-memory migration records in this trace: %s\n",
                   cupti::describe(r));
  });
}

void Injection::read_attributes(CUfunction function, RecordedLaunch& r) const {
  if (!function) return;
  int registers = 0, local = 0, shared = 0, blocks = 0, max_threads = 0;
  CUdevice device = 0;
  const int block_threads = static_cast<int>(r.block[0] * r.block[1] * r.block[2]);
  // Since CUDA 12 the runtime and libraries loaded through cuLibraryLoad launch CUkernel handles
  // cast to CUfunction; the attribute calls want the context's CUfunction of that kernel.
  if (CUfunction resolved = nullptr;
      cuFuncGetAttribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, function) != CUDA_SUCCESS &&
      cuKernelGetFunction(&resolved, reinterpret_cast<CUkernel>(function)) == CUDA_SUCCESS &&
      resolved)
    function = resolved;
  if (cuFuncGetAttribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, function) != CUDA_SUCCESS ||
      cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, function) != CUDA_SUCCESS ||
      cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function) != CUDA_SUCCESS)
    return;
  report::StaticAttributes a;
  a.registers_per_thread = registers;
  a.local_bytes_per_thread = static_cast<std::uint64_t>(local);
  a.static_shared_bytes = static_cast<std::uint64_t>(shared);
  if (block_threads > 0 &&
      cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, function, block_threads,
                                                  r.dynamic_shared_bytes) == CUDA_SUCCESS &&
      cuCtxGetDevice(&device) == CUDA_SUCCESS &&
      cuDeviceGetAttribute(&max_threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                           device) == CUDA_SUCCESS &&
      max_threads > 0) {
    a.max_active_blocks_per_sm = blocks;
    // Warps, not threads: a 48-thread block takes two warp slots.
    const int warps_per_block = (block_threads + 31) / 32;
    a.theoretical_occupancy = static_cast<double>(blocks * warps_per_block) / (max_threads / 32);
  }
  r.attributes = a;
}

bool Injection::wanted(const RecordedLaunch& r) {
  if (!filter_) return true;
  std::lock_guard<std::mutex> lock(names_mutex_);
  auto [it, added] = matches_.try_emplace(r.mangled_name, false);
  if (added) it->second = std::regex_search(report::demangle(r.mangled_name), *filter_);
  return it->second;
}

cupti::RangeProfiler* Injection::profiler_for(CUcontext context, std::string& why_not) {
  if (auto it = profiler_errors_.find(context); it != profiler_errors_.end()) {
    why_not = it->second;
    return nullptr;
  }
  auto& slot = profilers_[context];
  if (!slot) {
    try {
      CUdevice device = 0;
      if (cuCtxGetDevice(&device) != CUDA_SUCCESS) throw Error(ExitCode::internal, "no device");
      // RangeProfiler works on the calling thread's current context: the launch's.
      slot = std::make_unique<cupti::RangeProfiler>(static_cast<int>(device), config_.metrics);
    } catch (const std::exception& e) {
      profilers_.erase(context);
      why_not = profiler_errors_[context] = e.what();
      return nullptr;
    }
  }
  return slot.get();
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
  r.matched = wanted(r);
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
  if (std::string why_not; !session_ && !open_session(info.context, why_not)) {
    r.error = why_not;
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

void Injection::copy_launch(CUpti_CallbackId id, const CUpti_CallbackData& info) {
  InFlight& f = t_launch;
  f.copy = LaunchCopy::of_driver_launch(id, info.functionParams, f.not_copied);
}

// Called with profile_mutex_ held and `context` current (the launch's).
bool Injection::open_session(CUcontext context, std::string& why_not) {
  // Another process of the program may be profiling on this GPU: wait for its session to end.
  if (CUdevice device = 0; cuCtxGetDevice(&device) == CUDA_SUCCESS) {
    std::string why;
    switch (counter_lock_.acquire(device, kCounterTurnSeconds, why)) {
      case MachineLock::Outcome::held:
        break;
      case MachineLock::Outcome::timed_out:
        why_not = "another process held this GPU's counters for more than " +
                  std::to_string(static_cast<int>(kCounterTurnSeconds)) + " s";
        return false;
      case MachineLock::Outcome::failed:
        // Never silently unlocked: said once, and profiling goes on without taking turns.
        if (!said_unlocked_)
          std::fprintf(stderr,
                       "gpulab: warning: this GPU's counters cannot be locked (%s): profiling "
                       "goes on without taking turns with other processes\n",
                       why.c_str());
        said_unlocked_ = true;
        break;
    }
  }
  cupti::RangeProfiler* profiler = profiler_for(context, why_not);
  if (!profiler) {
    counter_lock_.release();
    return false;
  }
  std::unique_ptr<Checkpoint> before;
  try {
    if (batching()) {
      // The memory as the work already queued leaves it: where every pass starts.
      before = std::make_unique<Checkpoint>();
      if (const CUresult r = cuCtxSynchronize(); r != CUDA_SUCCESS)
        throw Error(ExitCode::internal,
                    "the program's work before the launch failed (CUDA error " +
                        std::to_string(r) + ")");
      if (std::string why; !before->save(context, why)) throw Error(ExitCode::internal, why);
    } else {
      profiler->begin_kernel_replay(kSessionLaunches);
    }
  } catch (const std::exception& e) {
    counter_lock_.release();
    why_not = e.what();
    return false;
  }
  session_.emplace();
  session_->context = context;
  session_->profiler = profiler;
  session_->before = std::move(before);
  session_open_ = true;
  return true;
}

// Batch replay of a closing session, with its context current: the launches' copies once per
// pass, each pass from the memory saved before the first; then the memory the program's own
// launches left. The program's launches may still be running: they are waited for first.
std::vector<cupti::RangeValues> Injection::replay_batch(Session& s) {
  // The program's own launches, each under the watchdog: one that waits for work the program
  // has yet to queue (the call that closed the batch) would never finish.
  CUresult waited = CUDA_SUCCESS;
  for (std::size_t i = 0; i < s.finished.size(); ++i) {
    if (!s.finished[i]) continue;
    watchdog_.arm(s.launches[i], s.names[i]);
    if (waited == CUDA_SUCCESS) waited = cuEventSynchronize(s.finished[i]);
    watchdog_.disarm();
    cuEventDestroy(s.finished[i]);
  }
  s.finished.clear();
  if (s.copies.empty()) return {};
  if (waited == CUDA_SUCCESS) waited = cuCtxSynchronize();
  if (waited != CUDA_SUCCESS)
    throw Error(ExitCode::internal,
                "the profiled launches failed (CUDA error " + std::to_string(waited) + ")");
  Checkpoint after;
  if (std::string why; !after.save(s.context, why)) throw Error(ExitCode::internal, why);
  // Whatever happens below, the program goes on from its own results.
  struct PutBack {
    Checkpoint& after;
    ~PutBack() {
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
      if (std::string why; !after.restore(why))
        std::fprintf(stderr, "gpulab: %s; the program's device memory may be wrong from here\n",
                     why.c_str());
    }
  } put_back{after};
  // The replays are not the program's launches: they get no activity records.
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);

  cupti::RangeProfiler::PassHooks hooks;
  hooks.before_pass = [&] {
    if (std::string why; !s.before->restore(why)) throw Error(ExitCode::internal, why);
  };
  return s.profiler->replay_kernels(
      [&] {
        for (std::size_t i = 0; i < s.copies.size(); ++i) {
          watchdog_.arm(s.launches[i], s.names[i]);
          CUresult r = s.copies[i].issue();
          if (r == CUDA_SUCCESS) r = cuCtxSynchronize();
          watchdog_.disarm();
          if (r != CUDA_SUCCESS)
            throw Error(ExitCode::internal, "launch " + std::to_string(s.launches[i]) +
                                                " failed when replayed (CUDA error " +
                                                std::to_string(r) + ")");
        }
      },
      s.copies.size(), hooks);
}

// Reads the open session's counters and writes them, one record per launch it holds. Called
// with profile_mutex_ held, on whichever thread ends the session: its context is made current
// for CUPTI if another is.
void Injection::close_session() {
  if (!session_) return;
  Session s = std::move(*session_);
  session_.reset();
  session_open_ = false;
  CUcontext current = nullptr;
  const bool pushed = cuCtxGetCurrent(&current) == CUDA_SUCCESS && current != s.context &&
                      cuCtxPushCurrent(s.context) == CUDA_SUCCESS;
  std::vector<cupti::RangeValues> ranges;
  std::string error;
  try {
    ranges = s.before ? replay_batch(s) : s.profiler->end_kernel_replay();
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (pushed) cuCtxPopCurrent(&current);
  counter_lock_.release();
  if (error.empty() && ranges.size() != s.launches.size())
    error = "kernel replay recorded " + std::to_string(ranges.size()) + " ranges for " +
            std::to_string(s.launches.size()) + " launches";
  std::string lines;
  for (std::size_t i = 0; i < s.launches.size(); ++i) {
    report::RecordedCounters c;
    c.pid = ::getpid();
    c.launch_index = s.launches[i];
    c.passes = s.profiler->passes();
    c.error = error;
    if (error.empty()) c.metrics = ranges[i].values;
    lines += report::to_line(c);
  }
  if (!lines.empty()) file_.write(lines);
}

void Injection::close_session_of(CUcontext context) {
  std::lock_guard<std::mutex> lock(profile_mutex_);
  if (session_ && (context == nullptr || session_->context == context)) close_session();
}

void Injection::launch_exit(const CUpti_CallbackData& info) {
  InFlight& f = t_launch;
  RecordedLaunch& r = f.record;
  if (!f.profiling) {
    if (f.in_full) file_.write(report::to_line(r));
    write_tally_when_due();
    return;
  }
  // A CUresult or a cudaError_t, by domain: both are 0 for success.
  const int returned =
      info.functionReturnValue ? *static_cast<const int*>(info.functionReturnValue) : 0;
  if (batching()) {
    batch_launch_exit(returned);
    return;
  }
  watchdog_.disarm();
  // Every pass has run once the kernel is done (kernel replay serializes it).
  const CUresult finished = returned == 0 ? cuCtxSynchronize() : CUDA_SUCCESS;
  if (returned != 0 || finished != CUDA_SUCCESS) {
    r.error =
        "the launch failed (CUDA error " + std::to_string(returned ? returned : finished) + ")";
    file_.write(report::to_line(r));
    close_session();  // what the launches before it recorded, if CUPTI can still read it
  } else {
    session_->launches.push_back(r.index);
    file_.write(report::to_line(r));  // its counters follow when the session closes
    if (session_->launches.size() >= kSessionLaunches) close_session();
  }
  f.profiling = false;
  f.serialized = {};
}

// A profiled launch under batch replay has been queued (and runs as the program launched it): it
// joins the session with its copy. A launch that failed or could not be copied ends the session:
// the launches before it are replayed from the memory saved before them, and the program goes on
// from the memory this one left.
void Injection::batch_launch_exit(int returned) {
  InFlight& f = t_launch;
  RecordedLaunch& r = f.record;
  if (returned != 0) {
    r.error = "the launch failed (CUDA error " + std::to_string(returned) + ")";
  } else if (!f.copy) {
    r.error = "no counters: " + f.not_copied;
  } else {
    CUevent finished = nullptr;
    if (cuEventCreate(&finished, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS &&
        cuEventRecord(finished, f.copy->stream()) != CUDA_SUCCESS) {
      cuEventDestroy(finished);
      finished = nullptr;
    }
    session_->launches.push_back(r.index);
    session_->copies.push_back(std::move(*f.copy));
    session_->names.push_back(r.mangled_name);
    session_->finished.push_back(finished);
  }
  file_.write(report::to_line(r));  // its counters follow when the session closes
  if (!r.error.empty() || session_->launches.size() >= kSessionLaunches) close_session();
  f.profiling = false;
  f.copy.reset();
  f.serialized = {};
}

void Injection::context_ending(CUcontext context) {
  // Before the context goes: its kernels' activity records, and its profiler's CUPTI objects.
  close_session_of(context);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(profile_mutex_);
  profilers_.erase(context);
}

void Injection::on_activities(cupti::Collected&& got) {
  const std::int64_t pid = ::getpid();
  std::string lines;
  for (const auto& t : got.records) {
    if (t.activity.kind == report::ActivityKind::kernel &&
        tally_.kernel_time(t.correlation_id, t.activity.name,
                           t.end > t.start ? static_cast<double>(t.end - t.start) * 1e-9 : 0))
      lines += report::to_line(report::RecordedKernelTime{
          pid, t.correlation_id, t.start, t.end, t.activity.stream, t.registers_per_thread,
          t.static_shared_bytes, t.local_bytes_per_thread});
    if (config_.mode == "trace") lines += report::to_line(pid, t);
  }
  if (config_.mode == "trace") lines += report::to_line(pid, got.counts);
  if (!lines.empty()) file_.write(lines);
  write_tally_when_due();
}

void Injection::write_tally_when_due() {
  if (!tally_.due()) return;
  if (const std::string lines = tally_.take_lines(::getpid()); !lines.empty()) file_.write(lines);
}

void Injection::on_watchdog(std::int64_t index, const std::string& name, double seconds) {
  file_.write(report::to_line(report::RecordedWatchdog{::getpid(), index, name, seconds}));
  std::fprintf(stderr,
               "gpulab: launch %lld of %s ran for more than %g s under replay; the program is "
               "stopped (a kernel that waits for another cannot be replayed: try --replay none)\n",
               static_cast<long long>(index), report::display_name(report::demangle(name)).c_str(),
               seconds);
  std::_Exit(kWatchdogExitCode);
}

void Injection::at_exit() {
  if (exit_pid_ == ::getpid()) return;  // registered once, runs once per process
  exit_pid_ = ::getpid();
  close_session_of(nullptr);
  if (subscriber_ && refused_.empty()) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  file_.write(tally_.take_lines(::getpid()) + report::end_line(::getpid()));
}

}  // namespace
}  // namespace gpulab::inject

// The driver calls this once, from the program's first cuInit; 1 means the tool is in place.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  using gpulab::inject::g_injection;
  if (g_injection) return 1;
  const char* text = std::getenv(gpulab::report::kInjectionConfigVariable);
  if (!text) return 1;  // loaded without gpulab profile: stay out of the way
  try {
    g_injection = new gpulab::inject::Injection(gpulab::report::injection_config_from_json(text));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpulab: the profile settings are unusable: %s\n", e.what());
    return 1;
  }
  pthread_atfork([] { g_injection->before_fork(); }, [] { g_injection->after_fork_in_parent(); },
                 [] { g_injection->after_fork_in_child(); });
  std::atexit([] { g_injection->at_exit(); });
  g_injection->start();
  return 1;
}
