// Forks before touching CUDA, then parent and child each launch their own kernel: each process
// writes its own records, and the report has both.
#include <sys/wait.h>
#include <unistd.h>

#include "app_check.cuh"

__global__ void in_parent(int* v) { v[threadIdx.x] = 1; }
__global__ void in_child(int* v) { v[threadIdx.x] = 2; }

int run(bool child) {
  int* d = nullptr;
  APP_CHECK(cudaMalloc(&d, 64 * sizeof(int)));
  if (child) {
    in_child<<<1, 64>>>(d);
  } else {
    in_parent<<<1, 64>>>(d);
  }
  APP_CHECK(cudaDeviceSynchronize());
  int first = 0;
  APP_CHECK(cudaMemcpy(&first, d, sizeof first, cudaMemcpyDeviceToHost));
  APP_CHECK(cudaFree(d));
  return first == (child ? 2 : 1) ? 0 : 91;
}

int main() {
  const pid_t pid = fork();
  if (pid < 0) return 93;
  if (pid == 0) _exit(run(true));
  const int mine = run(false);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return 94;
  return mine != 0 ? mine : WEXITSTATUS(status);
}
