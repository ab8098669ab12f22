// A kernel that waits for a flag another kernel sets, on another stream: the two must run
// together. Kernel replay runs one kernel alone, so the waiter never finishes there: the
// watchdog has to stop it, and --replay none profiles the program without serializing it.
#include "app_check.cuh"

__global__ void wait_for_flag(volatile int* flag) {
  while (*flag == 0) {
  }
}

__global__ void set_flag(volatile int* flag) { *flag = 1; }

int main() {
  int* flag = nullptr;
  APP_CHECK(cudaMalloc(&flag, sizeof(int)));
  APP_CHECK(cudaMemset(flag, 0, sizeof(int)));
  // CUDA loads a kernel lazily, at its first launch, and loading may wait for the GPU to go
  // idle: set_flag must be loaded before wait_for_flag runs, or the waiter never sees its flag.
  cudaFuncAttributes loaded{};
  APP_CHECK(cudaFuncGetAttributes(&loaded, set_flag));
  APP_CHECK(cudaFuncGetAttributes(&loaded, wait_for_flag));
  cudaStream_t a, b;
  APP_CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  APP_CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  wait_for_flag<<<1, 1, 0, a>>>(flag);
  set_flag<<<1, 1, 0, b>>>(flag);
  APP_CHECK(cudaDeviceSynchronize());
  APP_CHECK(cudaStreamDestroy(a));
  APP_CHECK(cudaStreamDestroy(b));
  APP_CHECK(cudaFree(flag));
  return 0;
}
