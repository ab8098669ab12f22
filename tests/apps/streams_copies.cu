// Two streams, each copying its half in from pinned memory, adding one on the GPU and copying
// it back: the timeline has copies and kernels on two streams.
#include "app_check.cuh"

__global__ void add_one(float* v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] += 1.0f;
}

int main() {
  const int n = 1 << 22, half = n / 2;
  float *host = nullptr, *dev = nullptr;
  APP_CHECK(cudaMallocHost(&host, n * sizeof(float)));
  APP_CHECK(cudaMalloc(&dev, n * sizeof(float)));
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i & 1023);
  cudaStream_t streams[2];
  for (auto& s : streams) APP_CHECK(cudaStreamCreate(&s));
  for (int k = 0; k < 2; ++k) {
    float* h = host + k * half;
    float* d = dev + k * half;
    APP_CHECK(cudaMemcpyAsync(d, h, half * sizeof(float), cudaMemcpyHostToDevice, streams[k]));
    add_one<<<half / 256, 256, 0, streams[k]>>>(d, half);
    APP_CHECK(cudaMemcpyAsync(h, d, half * sizeof(float), cudaMemcpyDeviceToHost, streams[k]));
  }
  APP_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i)
    if (host[i] != static_cast<float>(i & 1023) + 1.0f) return 91;
  for (auto& s : streams) APP_CHECK(cudaStreamDestroy(s));
  APP_CHECK(cudaFreeHost(host));
  APP_CHECK(cudaFree(dev));
  return 0;
}
