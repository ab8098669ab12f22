#include "cupti/launch_recorder.hpp"

#include <mutex>

#include <cupti.h>  // callbacks, callback ids and the launch calls' parameter structures

#include <fmt/format.h>

#include "cupti/cupti_check.hpp"

namespace gpulab::cupti {
namespace {

// Every driver entry point that launches one kernel: libraries call them directly, and the
// runtime may call them for its own launches.
constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
};

// Runtime launches (triple chevrons, cudaLaunchKernel). A driver launch made inside one of these
// on the same thread is that launch seen again, not another kernel.
constexpr CUpti_CallbackId kRuntimeLaunches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
};

// The driver's launch parameters and CUlaunchConfig name the shape alike (gridDimX, ...,
// sharedMemBytes); so do the runtime's (gridDim, blockDim, and the dynamic shared bytes).
template <typename Driver>
void set_driver_shape(LaunchRecord& r, const Driver* p) {
  if (!p) return;
  r.grid[0] = p->gridDimX, r.grid[1] = p->gridDimY, r.grid[2] = p->gridDimZ;
  r.block[0] = p->blockDimX, r.block[1] = p->blockDimY, r.block[2] = p->blockDimZ;
  r.dynamic_shared_bytes = p->sharedMemBytes;
}

void set_runtime_shape(LaunchRecord& r, const dim3& grid, const dim3& block, std::size_t shared) {
  r.grid[0] = grid.x, r.grid[1] = grid.y, r.grid[2] = grid.z;
  r.block[0] = block.x, r.block[1] = block.y, r.block[2] = block.z;
  r.dynamic_shared_bytes = static_cast<std::uint32_t>(shared);
}

template <typename Params>
const Params* as(const void* params) {
  return static_cast<const Params*>(params);
}

LaunchRecord driver_launch(CUpti_CallbackId id, const void* params) {
  LaunchRecord r;
  switch (id) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      set_driver_shape(r, as<cuLaunchKernel_params>(params));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      set_driver_shape(r, as<cuLaunchKernelEx_params>(params)->config);
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      set_driver_shape(r, as<cuLaunchCooperativeKernel_params>(params));
      break;
    default:
      break;
  }
  return r;
}

LaunchRecord runtime_launch(CUpti_CallbackId id, const void* params) {
  LaunchRecord r;
  switch (id) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000: {
      const auto* p = as<cudaLaunchKernel_v7000_params>(params);
      set_runtime_shape(r, p->gridDim, p->blockDim, p->sharedMem);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000: {
      const auto* p = as<cudaLaunchCooperativeKernel_v9000_params>(params);
      set_runtime_shape(r, p->gridDim, p->blockDim, p->sharedMem);
      break;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
      if (const auto* c = as<cudaLaunchKernelExC_v11060_params>(params)->config)
        set_runtime_shape(r, c->gridDim, c->blockDim, c->dynamicSmemBytes);
      break;
    default:
      break;  // __cudaLaunchKernel: the name is all the recorder keeps
  }
  return r;
}

}  // namespace

struct LaunchRecorder::State {
  CUpti_SubscriberHandle subscriber = nullptr;
  std::mutex mutex;  // libraries may launch from threads of their own
  std::vector<LaunchRecord> launches;

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
  auto* state = static_cast<LaunchRecorder::State*>(userdata);
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
