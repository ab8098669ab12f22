// Ends without returning from main: `exit N` calls exit(N) after its kernels (atexit handlers
// run); `crash` raises SIGSEGV after them (no handler runs): the report must hold the kernels
// in both cases, and say how the program ended.
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "app_check.cuh"

__global__ void touch(int* v) { v[threadIdx.x] = static_cast<int>(threadIdx.x); }

int main(int argc, char** argv) {
  int* d = nullptr;
  APP_CHECK(cudaMalloc(&d, 256 * sizeof(int)));
  for (int k = 0; k < 3; ++k) touch<<<1, 256>>>(d);
  APP_CHECK(cudaDeviceSynchronize());
  if (argc > 2 && std::strcmp(argv[1], "exit") == 0) std::exit(std::atoi(argv[2]));
  if (argc > 1 && std::strcmp(argv[1], "crash") == 0) std::raise(SIGSEGV);
  return 0;
}
