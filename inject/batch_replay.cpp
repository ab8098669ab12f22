// --replay batch: each profiled launch copied at its driver entry, and the session's copies
// replayed together once per pass when it closes, from the memory saved before the first.
#include "inject/injection.hpp"

#include <cstdio>
#include <string>

#include "cupti/cupti_check.hpp"

namespace gpulab::inject {

void Injection::copy_launch(CUpti_CallbackId id, const CUpti_CallbackData& info) {
  InFlight& f = t_launch;
  f.copy = LaunchCopy::of_driver_launch(id, info.functionParams, f.not_copied);
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
  after.save(s.context);
  // Whatever happens below, the program goes on from its own results.
  struct PutBack {
    Checkpoint& after;
    ~PutBack() {
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
      try {
        after.restore();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "gpulab: %s; the program's device memory may be wrong from here\n",
                     e.what());
      }
    }
  } put_back{after};
  // The replays are not the program's launches: they get no activity records.
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);

  const auto issue_copies = [&] {
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
  };
  cupti::RangeProfiler::PassHooks hooks;
  hooks.before_pass = [&] { s.before->restore(); };
  auto ranges = s.profiler->replay_kernels(issue_copies, s.copies.size(), hooks);
  if (config_.source)
    collect_sources(s, [&] {
      s.before->restore();
      issue_copies();
    });
  return ranges;
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

}  // namespace gpulab::inject
