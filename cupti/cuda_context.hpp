// The CUDA context CUPTI's per-context calls name, reached without linking libcuda. Included
// only by cupti/*.cpp.
#pragma once

#include <cuda.h>

namespace gpulab::cupti {

// The calling thread's current context, through the runtime's driver entry point (libcuda is
// absent on machines without a GPU driver, where `gpulab list` must work). Throws ApiError when
// there is none.
CUcontext current_context();

}  // namespace gpulab::cupti
