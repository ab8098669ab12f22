// NVTX ranges around launches, for --nvtx-include/--nvtx-exclude and the report's ranges: a
// push/pop range opened before the first CUDA call ("setup"), a start/end range ("epoch") around
// three steps of nested push/pop ranges (train/step/forward, train/step/backward), a range of
// another domain ("Domain B@io") inside each step, and one launch outside every range. Each kernel
// adds a known amount to its own counter; the host checks every sum at the end.
//   setup                                   fill       x1
//   epoch/train/step/forward                forward    x3
//   epoch/train/step/backward               backward   x3
//   epoch/train/step/Domain B@io            pack       x3
//   (none)                                  tail       x1
#include <nvtx3/nvToolsExt.h>

#include "app_check.cuh"

__global__ void fill(int* v) { atomicAdd(&v[0], 1); }
__global__ void forward(int* v) { atomicAdd(&v[1], 1); }
__global__ void backward(int* v) { atomicAdd(&v[2], 1); }
__global__ void pack(int* v) { atomicAdd(&v[3], 1); }
__global__ void tail(int* v) { atomicAdd(&v[4], 1); }

int main() {
  constexpr int kSteps = 3, kBlocks = 64, kThreads = 128;
  nvtxRangePushA("setup");  // before CUDA is initialized
  int* counts = nullptr;
  APP_CHECK(cudaMalloc(&counts, 5 * sizeof(int)));
  APP_CHECK(cudaMemset(counts, 0, 5 * sizeof(int)));
  fill<<<kBlocks, kThreads>>>(counts);
  nvtxRangePop();

  nvtxDomainHandle_t domain_b = nvtxDomainCreateA("Domain B");
  nvtxEventAttributes_t io{};
  io.version = NVTX_VERSION;
  io.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  io.messageType = NVTX_MESSAGE_TYPE_ASCII;
  io.message.ascii = "io";

  const nvtxRangeId_t epoch = nvtxRangeStartA("epoch");
  nvtxRangePushA("train");
  for (int step = 0; step < kSteps; ++step) {
    nvtxRangePushA("step");
    nvtxRangePushA("forward");
    forward<<<kBlocks, kThreads>>>(counts);
    nvtxRangePop();
    nvtxRangePushA("backward");
    backward<<<kBlocks, kThreads>>>(counts);
    nvtxRangePop();
    nvtxDomainRangePushEx(domain_b, &io);
    pack<<<kBlocks, kThreads>>>(counts);
    nvtxDomainRangePop(domain_b);
    nvtxRangePop();
  }
  nvtxRangePop();
  nvtxRangeEnd(epoch);
  tail<<<kBlocks, kThreads>>>(counts);
  APP_CHECK(cudaGetLastError());

  int host[5] = {};
  APP_CHECK(cudaMemcpy(host, counts, sizeof host, cudaMemcpyDeviceToHost));
  const int per_launch = kBlocks * kThreads;
  const int expected[5] = {per_launch, kSteps * per_launch, kSteps * per_launch,
                           kSteps * per_launch, per_launch};
  for (int i = 0; i < 5; ++i)
    if (host[i] != expected[i]) return 91;
  APP_CHECK(cudaFree(counts));
  nvtxDomainDestroy(domain_b);
  return 0;
}
