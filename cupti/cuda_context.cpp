#include "cupti/cuda_context.hpp"

#include <cuda_runtime_api.h>

#include "reports/base/errors.hpp"

namespace gpulab::cupti {

CUcontext current_context() {
  using GetCurrent = CUresult (*)(CUcontext*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  const cudaError_t err =
      cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &found);
  if (err != cudaSuccess || found != cudaDriverEntryPointSuccess || fn == nullptr)
    throw ApiError("CUDA", static_cast<int>(err), "cannot reach the driver's cuCtxGetCurrent");
  CUcontext ctx = nullptr;
  const CUresult r = reinterpret_cast<GetCurrent>(fn)(&ctx);
  if (r != CUDA_SUCCESS || ctx == nullptr)
    throw ApiError("CUDA driver", static_cast<int>(r), "no current CUDA context to profile");
  return ctx;
}

}  // namespace gpulab::cupti
