// The CUPTI Activity API's buffers, decoded: kernels, copies, memsets and unified-memory events
// as report::TraceRecord intervals and counts. CUPTI's buffer callbacks are process-wide and
// cannot be unregistered, so one delivery point serves the process: the activity tracer (labs)
// and the injection library (profiled programs) each set where the records go.
#pragma once

#include <functional>
#include <vector>

#include <cupti_activity.h>

#include "reports/trace_assembly.hpp"

namespace gpulab::cupti {

// What one or more buffers delivered.
struct Collected {
  std::vector<report::TraceRecord> records;
  report::TraceCounts counts;

  void append(Collected&& other);
};

// Registers the buffer callbacks (once per process) and sends every completed buffer's records
// to `sink`, which replaces the previous one; an empty sink drops them. The sink runs on a
// CUPTI thread or inside cuptiActivityFlushAll, and must not throw.
void deliver_activities_to(std::function<void(Collected&&)> sink);

// Sets up the unified-memory counters, once per process. Success and "this platform has no
// unified-memory profiling" are final; any other failure is returned and tried again next time.
CUptiResult configure_unified_memory();

// Enabled kinds are disabled on every way out of a scope. When the scope ends without flush(),
// the records are still flushed first, so that none of them is delivered into a later one.
class EnabledKinds {
 public:
  EnabledKinds() = default;
  EnabledKinds(const EnabledKinds&) = delete;
  EnabledKinds& operator=(const EnabledKinds&) = delete;
  ~EnabledKinds();
  void enable(CUpti_ActivityKind kind);
  // As enable, but a refusal is returned instead of thrown (and the kind is not held).
  CUptiResult try_enable(CUpti_ActivityKind kind);
  // Before the kinds are disabled: unified-memory records still incomplete then would be lost.
  void flush();

 private:
  std::vector<CUpti_ActivityKind> kinds_;
  bool flushed_ = false;
};

}  // namespace gpulab::cupti
