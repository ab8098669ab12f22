// Kernels that add to their data in place, in every kind of memory a kernel can write: device,
// managed, and pinned host memory mapped into the device; and a host write to pinned memory
// between a launch and the copy that reads it. Each launch runs once in the program's eyes
// whatever gpulab replays; a count that comes out different exits non-zero (91 + which).
#include <cstring>

#include "app_check.cuh"

__global__ void add_one(int* v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] += 1;
}

int main() {
  const int n = 1 << 16, launches = 3, threads = 256;
  const int blocks = n / threads;
  int *device = nullptr, *managed = nullptr, *mapped_host = nullptr, *mapped = nullptr;
  int* staging = nullptr;
  APP_CHECK(cudaMalloc(&device, n * sizeof(int)));
  APP_CHECK(cudaMallocManaged(&managed, n * sizeof(int)));
  APP_CHECK(cudaHostAlloc(&mapped_host, n * sizeof(int), cudaHostAllocMapped));
  APP_CHECK(cudaHostGetDevicePointer(&mapped, mapped_host, 0));
  APP_CHECK(cudaHostAlloc(&staging, n * sizeof(int), cudaHostAllocDefault));
  APP_CHECK(cudaMemset(device, 0, n * sizeof(int)));
  std::memset(managed, 0, n * sizeof(int));
  std::memset(mapped_host, 0, n * sizeof(int));
  std::memset(staging, 0, n * sizeof(int));

  for (int k = 0; k < launches; ++k) {
    add_one<<<blocks, threads>>>(device, n);
    add_one<<<blocks, threads>>>(managed, n);
    add_one<<<blocks, threads>>>(mapped, n);
  }
  APP_CHECK(cudaGetLastError());
  // Written by the host while the launches may still run, read by the copy after them.
  for (int i = 0; i < n; ++i) staging[i] = 7;
  APP_CHECK(cudaMemcpy(device, staging, sizeof(int), cudaMemcpyHostToDevice));
  add_one<<<blocks, threads>>>(device, n);
  APP_CHECK(cudaDeviceSynchronize());

  int first = 0, last = 0;
  APP_CHECK(cudaMemcpy(&first, device, sizeof first, cudaMemcpyDeviceToHost));
  APP_CHECK(cudaMemcpy(&last, device + n - 1, sizeof last, cudaMemcpyDeviceToHost));
  int code = 0;
  if (first != 8 || last != launches + 1) code = 91;
  else if (managed[0] != launches || managed[n - 1] != launches) code = 92;
  else if (mapped_host[0] != launches || mapped_host[n - 1] != launches) code = 93;
  if (code) std::fprintf(stderr, "memory_kinds: device %d %d, managed %d, mapped %d\n", first, last,
                         managed[0], mapped_host[0]);
  APP_CHECK(cudaFree(device));
  APP_CHECK(cudaFree(managed));
  APP_CHECK(cudaFreeHost(mapped_host));
  APP_CHECK(cudaFreeHost(staging));
  return code;
}
