// What the GPU did while a piece of host code ran, recorded with the CUPTI Activity API:
// kernels (CONCURRENT_KERNEL records, so that concurrency across streams is kept), copies and
// memsets with their stream and memory kinds, and unified-memory migrations and page faults.
//
// Tracing is a pass of its own: it is never enabled while counters are being replayed, and it
// is enabled only around the traced work, so that the records' cost does not touch timings.
#pragma once

#include <functional>
#include <memory>

#include "reports/timeline_model.hpp"

namespace gpulab::cupti {

class ActivityTracer {
 public:
  // Registers the buffer callbacks; enables nothing yet. Throws Error on a CUPTI failure.
  ActivityTracer();
  ~ActivityTracer();
  ActivityTracer(const ActivityTracer&) = delete;
  ActivityTracer& operator=(const ActivityTracer&) = delete;

  // Runs `warmup` (when given) and then `work` with tracing enabled, and returns what `work`
  // did: the activities that began after `warmup` returned, sorted by start time, in seconds
  // since the earliest one began. Unified-memory migration records of one direction and cause
  // that overlap or follow each other within a few microseconds are merged into one interval.
  // Both must leave the device idle (synchronize) before they return. The warm-up absorbs what
  // enabling the trace costs the first launches (on the H200, ~4 ms of idle GPU after the
  // first kernel of a traced sequence). The summary and the diagnosis are left empty
  // (reports/ derives them).
  report::Timeline trace(const std::function<void()>& work,
                         const std::function<void()>& warmup = {});

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpulab::cupti
