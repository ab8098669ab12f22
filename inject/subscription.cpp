// What the injection asks CUPTI to deliver when it starts in a process: the launch callbacks, the
// calls that end a replay session, NVTX, cudaProfilerStart/Stop where a capture range is asked,
// contexts and modules as they come where --source is, the activity records of its mode, and how
// a refusal (another CUPTI client) is said.
#include <unistd.h>

#include <cstdint>
#include <exception>
#include <string>

#include "cupti/activity_records.hpp"
#include "cupti/cupti_check.hpp"
#include "cupti/launch_params.hpp"
#include "inject/driver_calls.hpp"
#include "inject/injection.hpp"

namespace gpulab::inject {
namespace {

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
    // --source: the sampler starts with each context, before its modules load; each module's
    // cubin is kept for the lines of its instructions.
    if (config_.source && batching())
      for (auto id : {CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CUPTI_CBID_RESOURCE_MODULE_LOADED})
        GPULAB_CUPTI_CHECK(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE, id));
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

}  // namespace gpulab::inject
