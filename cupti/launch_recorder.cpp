#include "cupti/launch_recorder.hpp"

#include <mutex>

#include <fmt/format.h>

#include "cupti/cubin_store.hpp"
#include "cupti/cupti_check.hpp"
#include "cupti/launch_params.hpp"

namespace gpulab::cupti {

struct LaunchRecorder::State {
  CUpti_SubscriberHandle subscriber = nullptr;
  std::mutex mutex;  // libraries may launch from threads of their own
  std::vector<LaunchRecord> launches;
  CubinStore* cubins = nullptr;  // set by capture_cubins

  void enable(uint32_t on) {
    for (auto id : kDriverLaunches)
      GPULAB_CUPTI_CHECK(cuptiEnableCallback(on, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id));
    for (auto id : kRuntimeLaunches)
      GPULAB_CUPTI_CHECK(cuptiEnableCallback(on, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id));
  }
};

namespace {

// Depth of runtime launch calls on this thread: driver launches inside them are not counted.
thread_local int t_runtime_depth = 0;

void CUPTIAPI on_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                          const void* data) {
  auto* state = static_cast<LaunchRecorder::State*>(userdata);
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    if (id != CUPTI_CBID_RESOURCE_MODULE_LOADED || state->cubins == nullptr) return;
    const auto* resource = static_cast<const CUpti_ResourceData*>(data);
    const auto* module = static_cast<const CUpti_ModuleResourceData*>(resource->resourceDescriptor);
    if (module) state->cubins->add(module->pCubin, module->cubinSize);
    return;
  }
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (info->callbackSite == CUPTI_API_EXIT) {
    if (runtime && t_runtime_depth > 0) --t_runtime_depth;
    return;
  }
  if (!runtime && t_runtime_depth > 0) return;
  if (runtime) ++t_runtime_depth;
  LaunchRecord r = runtime ? runtime_launch(id, info->functionParams)
                           : driver_launch(id, info->functionParams);
  r.mangled_name = info->symbolName ? info->symbolName : "";
  std::lock_guard<std::mutex> lock(state->mutex);
  state->launches.push_back(std::move(r));
}

}  // namespace

LaunchRecorder::LaunchRecorder() : state_(std::make_unique<State>()) {
  const CUptiResult r = cuptiSubscribe(&state_->subscriber, on_callback, state_.get());
  if (r != CUPTI_SUCCESS) {
    throw Error(ExitCode::no_gpu,
                fmt::format("kernel launches cannot be recorded ({}): another CUPTI client "
                            "(ncu, nsys, compute-sanitizer) holds the callbacks",
                            describe(r)));
  }
}

LaunchRecorder::~LaunchRecorder() {
  if (state_->subscriber) GPULAB_CUPTI_CHECK_NOEXCEPT(cuptiUnsubscribe(state_->subscriber));
}

void LaunchRecorder::capture_cubins(CubinStore& store) {
  state_->cubins = &store;
  GPULAB_CUPTI_CHECK(cuptiEnableCallback(1, state_->subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                         CUPTI_CBID_RESOURCE_MODULE_LOADED));
}

std::vector<LaunchRecord> LaunchRecorder::record(const std::function<void()>& work) {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->launches.clear();
  }
  state_->enable(1);
  try {
    work();
  } catch (...) {
    try {
      state_->enable(0);
    } catch (...) {
    }
    throw;
  }
  state_->enable(0);
  std::lock_guard<std::mutex> lock(state_->mutex);
  return std::move(state_->launches);
}

}  // namespace gpulab::cupti
