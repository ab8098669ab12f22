#include "cupti/launch_params.hpp"

namespace gpulab::cupti {
namespace {

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

}  // namespace

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

CUfunction driver_function(CUpti_CallbackId id, const void* params) {
  switch (id) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      return as<cuLaunchKernel_params>(params)->f;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      return as<cuLaunchKernelEx_params>(params)->f;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      return as<cuLaunchCooperativeKernel_params>(params)->f;
    default:
      return nullptr;
  }
}

}  // namespace gpulab::cupti
