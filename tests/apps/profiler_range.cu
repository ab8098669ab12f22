// cudaProfilerStart and cudaProfilerStop around part of the launches, for --capture-range
// cudaProfilerApi: two launches of `before`, three of `inside` between the calls, two of `after`.
// Each kernel adds to its own counter; the host checks every sum at the end.
#include <cuda_profiler_api.h>

#include "app_check.cuh"

__global__ void before(int* v) { atomicAdd(&v[0], 1); }
__global__ void inside(int* v) { atomicAdd(&v[1], 1); }
__global__ void after(int* v) { atomicAdd(&v[2], 1); }

int main() {
  constexpr int kBlocks = 32, kThreads = 128;
  int* counts = nullptr;
  APP_CHECK(cudaMalloc(&counts, 3 * sizeof(int)));
  APP_CHECK(cudaMemset(counts, 0, 3 * sizeof(int)));
  for (int i = 0; i < 2; ++i) before<<<kBlocks, kThreads>>>(counts);
  APP_CHECK(cudaProfilerStart());
  for (int i = 0; i < 3; ++i) inside<<<kBlocks, kThreads>>>(counts);
  APP_CHECK(cudaProfilerStop());
  for (int i = 0; i < 2; ++i) after<<<kBlocks, kThreads>>>(counts);
  APP_CHECK(cudaGetLastError());
  int host[3] = {};
  APP_CHECK(cudaMemcpy(host, counts, sizeof host, cudaMemcpyDeviceToHost));
  const int per_launch = kBlocks * kThreads;
  if (host[0] != 2 * per_launch || host[1] != 3 * per_launch || host[2] != 2 * per_launch)
    return 91;
  APP_CHECK(cudaFree(counts));
  return 0;
}
