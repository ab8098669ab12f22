// Triple-chevron launches of a plain kernel and of two instances of a template kernel, each
// checked on the host: y = 2x + y over 1M floats (8 MB moved per saxpy), then scale<float> and
// scale<double>.
#include <vector>

#include "app_check.cuh"

__global__ void saxpy(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

template <typename T>
__global__ void scale(T* v, int n, T factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] *= factor;
}

int main() {
  const int n = 1 << 20;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 97), y[i] = 1.0f;
  float *dx = nullptr, *dy = nullptr;
  double* dd = nullptr;
  APP_CHECK(cudaMalloc(&dx, n * sizeof(float)));
  APP_CHECK(cudaMalloc(&dy, n * sizeof(float)));
  APP_CHECK(cudaMalloc(&dd, n * sizeof(double)));
  APP_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  APP_CHECK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  APP_CHECK(cudaMemset(dd, 0, n * sizeof(double)));
  const int block = 256, grid = (n + block - 1) / block;
  saxpy<<<grid, block>>>(n, 2.0f, dx, dy);
  scale<float><<<grid, block>>>(dy, n, 0.5f);
  scale<double><<<grid, block>>>(dd, n, 3.0);
  APP_CHECK(cudaGetLastError());
  APP_CHECK(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    if (y[i] != (2.0f * static_cast<float>(i % 97) + 1.0f) * 0.5f) return 91;
  APP_CHECK(cudaFree(dx));
  APP_CHECK(cudaFree(dy));
  APP_CHECK(cudaFree(dd));
  return 0;
}
