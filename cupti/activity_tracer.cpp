#include "cupti/activity_tracer.hpp"

#include <chrono>
#include <cstdint>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "cupti/activity_records.hpp"
#include "cupti/cupti_check.hpp"
#include "reports/trace_assembly.hpp"

namespace gpulab::cupti {
namespace {

// The records go to the one live tracer (deliver_activities_to), or nowhere when there is none.
std::mutex g_mutex;
Collected* g_active = nullptr;

}  // namespace

struct ActivityTracer::State {
  Collected collected;
};

ActivityTracer::ActivityTracer() : state_(std::make_unique<State>()) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_active != nullptr)
      throw Error(
          ExitCode::internal,
          "an activity tracer is already active: CUPTI delivers records to one per process");
    g_active = &state_->collected;
  }
  // Outside g_mutex: the sink takes it, inside the delivery lock.
  deliver_activities_to([](Collected&& got) {
    std::lock_guard<std::mutex> active(g_mutex);
    if (g_active != nullptr) g_active->append(std::move(got));
  });
  // Managed memory allocated before the unified-memory counters were first configured and
  // enabled produced no migration records on the H200 (a lab allocates at setup, before its
  // first trace): set them up now, once, with nothing to record.
  if (configure_unified_memory() == CUPTI_SUCCESS) {
    EnabledKinds kinds;
    kinds.enable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  }
}

ActivityTracer::~ActivityTracer() {
  // Returns the buffers CUPTI still holds (and so frees them) while they can be delivered here.
  GPULAB_CUPTI_CHECK_NOEXCEPT(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  std::lock_guard<std::mutex> lock(g_mutex);
  g_active = nullptr;
}

report::Timeline ActivityTracer::trace(const std::function<void()>& work,
                                       const std::function<void()>& warmup) {
  report::Timeline timeline;
  timeline.kernel_records = "concurrent";
  auto& um = timeline.unified_memory;
  const CUptiResult configured = configure_unified_memory();
  um.available = configured == CUPTI_SUCCESS;
  if (!um.available)
    um.note = fmt::format("unified-memory counters unavailable (CUPTI error {}: {})",
                          static_cast<int>(configured), describe(configured));

  {
    std::lock_guard<std::mutex> lock(g_mutex);
    state_->collected = Collected{};  // what a failed earlier trace left
  }
  std::uint64_t since = 0;  // activities that began earlier belong to the warm-up
  {
    EnabledKinds kinds;
    kinds.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    kinds.enable(CUPTI_ACTIVITY_KIND_MEMCPY);
    kinds.enable(CUPTI_ACTIVITY_KIND_MEMSET);
    if (um.available) kinds.enable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
    if (warmup) {
      warmup();
      GPULAB_CUPTI_CHECK(cuptiGetTimestamp(&since));
    }
    const auto begin = std::chrono::steady_clock::now();
    work();
    timeline.trace_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    kinds.flush();
  }

  Collected got;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    got = std::exchange(state_->collected, Collected{});
  }
  timeline.activities = report::assemble_activities(std::move(got.records), since);

  report::add_trace_counts(timeline, got.counts);
  return timeline;
}

}  // namespace gpulab::cupti
