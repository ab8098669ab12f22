// 200 short launches of one kernel (a few microseconds each): the default --launch-count
// profiles the first 100 and times the rest.
#include "app_check.cuh"

__global__ void increment(int* v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] += 1;
}

int main() {
  const int n = 1 << 16, launches = 200;
  int* d = nullptr;
  APP_CHECK(cudaMalloc(&d, n * sizeof(int)));
  APP_CHECK(cudaMemset(d, 0, n * sizeof(int)));
  for (int k = 0; k < launches; ++k) increment<<<n / 256, 256>>>(d, n);
  APP_CHECK(cudaGetLastError());
  int first = 0, last = 0;
  APP_CHECK(cudaMemcpy(&first, d, sizeof first, cudaMemcpyDeviceToHost));
  APP_CHECK(cudaMemcpy(&last, d + n - 1, sizeof last, cudaMemcpyDeviceToHost));
  APP_CHECK(cudaFree(d));
  return first == launches && last == launches ? 0 : 91;
}
