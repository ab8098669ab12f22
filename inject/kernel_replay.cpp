// Sessions of consecutive profiled launches: opened at a profiled launch (waiting for another
// process's turn at the GPU's counters), closed at a launch not to be profiled, at a call that
// ends it (driver_calls.hpp), when full, or at the end; the counters are read when one closes.
#include "inject/injection.hpp"

#include <cstdio>
#include <string>

#include "cupti/cupti_check.hpp"

namespace gpulab::inject {

// A context whose profiler could not be made is not asked again: its launches get the same error.
cupti::RangeProfiler& Injection::profiler_for(CUcontext context) {
  if (auto it = profiler_errors_.find(context); it != profiler_errors_.end())
    throw Error(ExitCode::internal, it->second);
  auto& slot = profilers_[context];
  if (!slot) {
    try {
      CUdevice device = 0;
      if (cuCtxGetDevice(&device) != CUDA_SUCCESS) throw Error(ExitCode::internal, "no device");
      // RangeProfiler works on the calling thread's current context: the launch's.
      slot = std::make_unique<cupti::RangeProfiler>(static_cast<int>(device), config_.metrics);
    } catch (const std::exception& e) {
      profilers_.erase(context);
      profiler_errors_[context] = e.what();
      throw;
    }
  }
  return *slot;
}

// Called with profile_mutex_ held and `context` current (the launch's).
void Injection::open_session(CUcontext context) {
  if (sampler_) sampler_->pause();  // --source: the range profiler runs with sampling off
  // Another process of the program may be profiling on this GPU: wait for its session to end.
  if (CUdevice device = 0; cuCtxGetDevice(&device) == CUDA_SUCCESS) {
    std::string why;
    switch (counter_lock_.acquire(device, kCounterTurnSeconds, why)) {
      case MachineLock::Outcome::held:
        break;
      case MachineLock::Outcome::timed_out:
        throw Error(ExitCode::internal, "another process held this GPU's counters for more than " +
                                            std::to_string(static_cast<int>(kCounterTurnSeconds)) +
                                            " s");
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
  cupti::RangeProfiler* profiler = nullptr;
  std::unique_ptr<Checkpoint> before;
  try {
    profiler = &profiler_for(context);
    if (batching()) {
      // The memory as the work already queued leaves it: where every pass starts.
      before = std::make_unique<Checkpoint>();
      if (const CUresult r = cuCtxSynchronize(); r != CUDA_SUCCESS)
        throw Error(ExitCode::internal, "the program's work before the launch failed (CUDA error " +
                                            std::to_string(r) + ")");
      before->save(context);
    } else {
      profiler->begin_kernel_replay(kSessionLaunches);
    }
  } catch (...) {
    counter_lock_.release();
    throw;
  }
  session_.emplace();
  session_->context = context;
  session_->profiler = profiler;
  session_->before = std::move(before);
  session_open_ = true;
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
  lines += s.source_lines;  // after the counters of the launches they belong to
  if (!lines.empty()) file_.write(lines);
}

void Injection::close_session_of(CUcontext context) {
  std::lock_guard<std::mutex> lock(profile_mutex_);
  if (session_ && (context == nullptr || session_->context == context)) close_session();
}

void Injection::context_ending(CUcontext context) {
  // Before the context goes: its kernels' activity records, and its profiler's CUPTI objects.
  close_session_of(context);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(profile_mutex_);
  profilers_.erase(context);
}

}  // namespace gpulab::inject
