// The injection library's one object per process (libgpulab_inject.so), declared once for the
// files that each do one of its jobs:
//   entry_points.cpp     InitializeInjection (cuInit) and InitializeInjectionNvtx2: the start,
//   fork, exit subscription.cpp     what CUPTI is asked to deliver: callbacks, NVTX, activity kinds
//   injection.cpp        the CUPTI callbacks, which launches pass the filters
//   launch_records.cpp   a launch's record and attributes, the end of a profiled launch
//   kernel_replay.cpp    sessions of consecutive profiled launches, their counters read at close
//   batch_replay.cpp     --replay batch: the session's copies replayed together
//   source_replay.cpp    --source: the copies replayed once patched, once sampled: each function's
//   source activity_output.cpp  activity records: kernel durations, the trace, the launch tallies
// What the library does, and why, is said at the top of injection.cpp.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <cuda.h>
#include <cupti.h>

#include "cupti/activity_records.hpp"
#include "cupti/cubin_store.hpp"
#include "cupti/pc_sampling.hpp"
#include "cupti/range_profiler.hpp"
#include "cupti/sass_metrics.hpp"
#include "inject/checkpoint.hpp"
#include "inject/counter_lock.hpp"
#include "inject/launch_copy.hpp"
#include "inject/nvtx_ranges.hpp"
#include "inject/record_file.hpp"
#include "inject/watchdog.hpp"
#include "reports/launch_tally.hpp"
#include "reports/nvtx_filter.hpp"
#include "reports/profile_records.hpp"

namespace gpulab::inject {

using report::RecordedLaunch;

// The process status the watchdog ends a program with (documented in docs/profile.md).
constexpr int kWatchdogExitCode = 124;

// The most launches one kernel-replay session holds before its counters are read: a crash loses
// the counters of at most this many launches (their records are written as they return).
constexpr std::size_t kSessionLaunches = 64;

// How long a process waits for another process of the program to finish its session on the
// same GPU before it gives up profiling a launch (which then runs and is timed, unprofiled).
constexpr double kCounterTurnSeconds = 60;

// What one launch callback pair (entry, exit) shares on its thread. Launch calls nest (a
// runtime launch makes a driver launch): only the outermost is a launch of its own.
struct InFlight {
  int depth = 0;
  RecordedLaunch record;
  bool in_full = false;  // recorded one by one, not only tallied (reports/launch_tally.hpp)
  bool profiling = false;
  std::optional<LaunchCopy> copy;           // batch replay: the launch, copied at its driver entry
  std::string not_copied;                   // why there is no copy
  std::unique_lock<std::mutex> serialized;  // held from a profiled launch's entry to its exit
};
inline thread_local InFlight t_launch;

// Set while this thread runs gpulab's own code in a callback: a driver call made there (the
// synchronize after a profiled launch) is gpulab's, not the program's.
inline thread_local bool t_in_callback = false;

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
  std::string source_lines;  // --source: the records of its functions' sources, once replayed
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
    nvtx_filter_ = report::NvtxFilter(config_.nvtx_include, config_.nvtx_exclude);
    capturing_ = !config_.profiler_api_range;
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
    nvtx_.after_fork_in_child();
  }

 private:
  std::string process_line() const {
    report::RecordedProcess p;
    p.pid = ::getpid();
    p.parent_pid = ::getppid();
    p.mode = report::to_string(config_.mode);
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
  bool counting() const { return config_.mode == report::InjectionMode::counters; }
  bool tracing() const { return config_.mode == report::InjectionMode::trace; }
  bool batching() const { return counting() && config_.replay == report::ReplayMode::batch; }
  bool replaying() const { return counting() && config_.replay != report::ReplayMode::none; }
  void read_attributes(CUfunction function, RecordedLaunch& r) const;
  void unified_memory_records_late();
  bool wanted(const RecordedLaunch& r);
  bool in_region() const;
  void on_profiler_call(CUpti_CallbackId id, const CUpti_CallbackData& call);
  // These throw Error: the launch entry writes what they say into the launch's record.
  cupti::RangeProfiler& profiler_for(CUcontext context);
  void enable_session_ending_calls();
  void open_session(CUcontext context);
  void close_session();
  void close_session_of(CUcontext context);
  void context_ending(CUcontext context);
  void on_activities(cupti::Collected&& got);
  void write_tally_when_due();
  void on_watchdog(std::int64_t index, const std::string& name, double seconds);
  // --source (inject/source_replay.cpp): at a context's creation, before its modules load, the
  // sampler (paused); at a module's load, its cubin; after a batch's passes, its sources.
  void start_sampling(CUcontext context);
  void collect_sources(Session& s, const std::function<void()>& run_copies);

  report::InjectionConfig config_;
  std::optional<std::regex> filter_;
  report::NvtxFilter nvtx_filter_;
  NvtxRanges nvtx_;
  // Between cudaProfilerStart and cudaProfilerStop, or always without --capture-range.
  std::atomic<bool> capturing_{true};
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
  // --source: the cubins loaded, the patcher and sampler (or why not), the functions whose
  // source is recorded (under profile_mutex_).
  cupti::CubinStore cubins_;
  std::unique_ptr<cupti::SassMetrics> sass_;
  std::unique_ptr<cupti::PcSampler> sampler_;
  std::string sass_unavailable_, sampling_unavailable_;
  std::set<std::string> sourced_;
  pid_t exit_pid_ = 0;
};

}  // namespace gpulab::inject
