// The test programs of `gpulab profile` check their own CUDA calls and results: a program that
// profiling broke exits non-zero, which the GPU tests see through gpulab's exit status.
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define APP_CHECK(call)                                                  \
  do {                                                                   \
    const cudaError_t app_status_ = (call);                              \
    if (app_status_ != cudaSuccess) {                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                   cudaGetErrorString(app_status_));                     \
      std::exit(90);                                                     \
    }                                                                    \
  } while (0)
