// A launch through the driver API (cuLaunchKernel), as libraries make them: the kernel's
// CUfunction comes from the runtime (cudaGetFuncBySymbol), its arguments as a pointer array.
#include <cuda.h>

#include "app_check.cuh"

extern "C" __global__ void fill(int* out, int n, int value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value + i;
}

int main() {
  const int n = 4096;
  int* d = nullptr;
  APP_CHECK(cudaMalloc(&d, n * sizeof(int)));
  cudaFunction_t function = nullptr;
  APP_CHECK(cudaGetFuncBySymbol(&function, reinterpret_cast<const void*>(fill)));
  int count = n, value = 7;
  void* args[] = {&d, &count, &value};
  if (cuLaunchKernel(reinterpret_cast<CUfunction>(function), n / 128, 1, 1, 128, 1, 1, 0, nullptr,
                     args, nullptr) != CUDA_SUCCESS)
    return 92;
  int host[n];
  APP_CHECK(cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    if (host[i] != 7 + i) return 91;
  APP_CHECK(cudaFree(d));
  return 0;
}
