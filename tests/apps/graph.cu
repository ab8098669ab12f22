// A CUDA graph of two kernels, captured from a stream and launched three times: the graph's
// kernels are not launches of their own (no launch callback), but their activity records are.
#include "app_check.cuh"

__global__ void first_step(float* v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = v[i] * 2.0f;
}

__global__ void second_step(float* v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = v[i] + 1.0f;
}

int main() {
  const int n = 1 << 16;
  float* d = nullptr;
  APP_CHECK(cudaMalloc(&d, n * sizeof(float)));
  APP_CHECK(cudaMemset(d, 0, n * sizeof(float)));
  cudaStream_t s;
  APP_CHECK(cudaStreamCreate(&s));
  cudaGraph_t graph;
  APP_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  first_step<<<n / 256, 256, 0, s>>>(d, n);
  second_step<<<n / 256, 256, 0, s>>>(d, n);
  APP_CHECK(cudaStreamEndCapture(s, &graph));
  cudaGraphExec_t exec;
  APP_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int k = 0; k < 3; ++k) APP_CHECK(cudaGraphLaunch(exec, s));
  APP_CHECK(cudaStreamSynchronize(s));
  float v = 0;
  APP_CHECK(cudaMemcpy(&v, d, sizeof v, cudaMemcpyDeviceToHost));
  APP_CHECK(cudaGraphExecDestroy(exec));
  APP_CHECK(cudaGraphDestroy(graph));
  APP_CHECK(cudaStreamDestroy(s));
  APP_CHECK(cudaFree(d));
  return v == 7.0f ? 0 : 91;  // ((0*2+1)*2+1)*2+1
}
