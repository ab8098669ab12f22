// Checks for CUDA runtime calls: throw gpulab::ApiError with the call text, file:line and the
// runtime's error string (or, in destructors, warn and carry on).
#pragma once

#include <cuda_runtime_api.h>

#include "reports/base/errors.hpp"

#define GPULAB_CUDA_CHECK(call) GPULAB_API_CHECK("CUDA", call, cudaSuccess, ::cudaGetErrorString)

#define GPULAB_CUDA_CHECK_NOEXCEPT(call) \
  GPULAB_API_CHECK_NOEXCEPT("CUDA", call, cudaSuccess, ::cudaGetErrorString)

// After a <<<...>>> launch: configuration errors surface at once through cudaGetLastError;
// faults inside the kernel surface at the next synchronizing call, which is checked too.
#define GPULAB_CUDA_CHECK_LAUNCH() GPULAB_CUDA_CHECK(cudaGetLastError())
