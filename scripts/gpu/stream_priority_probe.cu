// How long a kernel that needs whole SMs waits behind a compute kernel that fills every SM, on a
// stream of normal and of the greatest priority: the question the nccl lab's bucketed-overlap
// variant asks of one GPU. NCCL's kernels take an SM per block and share it with no other kernel;
// a bucket's all-reduce becomes ready when the bucket's gradient is done, while the next bucket's
// gradient (131,072 blocks, ~124 waves of the H200's 132 SMs) is already queued. Whether the
// collective starts at once or after that gradient has dispatched its last block decides how
// much of it the compute hides.
//
// Here the collective is a stand-in: 16 blocks of 1,024 threads holding 200 KB of shared memory
// each (one per SM, as NCCL's), spinning for a fixed time. Every kernel stamps its first start
// and last end with %globaltimer; the probe prints, per priority, the mean wait from a bucket's
// gradient end to its stand-in's start and the whole step's span.
//   nvcc -O2 -arch=sm_90 -o stream_priority_probe scripts/gpu/stream_priority_probe.cu
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(call)                                                                               \
  do {                                                                                            \
    cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

constexpr int kBuckets = 8;
constexpr std::size_t kElements = std::size_t(1) << 28;  // the lab's default gradient
constexpr int kRounds = 256;
constexpr int kStandInBlocks = 16;
constexpr int kStandInSharedBytes = 200 * 1024;
constexpr std::uint64_t kStandInNs = 300'000;  // ~ a 1/8 GiB bucket at ~400 GB/s

struct Stamps {
  unsigned long long start;
  unsigned long long end;
};

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ void stamp_start(Stamps* s) {
  if (threadIdx.x == 0) atomicMin(&s->start, now_ns());
}
__device__ void stamp_end(Stamps* s) {
  __syncthreads();
  if (threadIdx.x == 0) atomicMax(&s->end, now_ns());
}

__global__ void gradient(const std::uint32_t* x, float* g, std::size_t n, int rounds, Stamps* s) {
  stamp_start(s);
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    std::uint32_t v = x[i];
    for (int r = 0; r < rounds; ++r) asm("mad.lo.u32 %0, %0, 1664525, 1013904223;" : "+r"(v));
    g[i] = float(v >> 9);
  }
  stamp_end(s);
}

__global__ void stand_in(Stamps* s, std::uint64_t ns) {
  extern __shared__ unsigned char hold[];
  stamp_start(s);
  const unsigned long long until = now_ns() + ns;
  while (now_ns() < until) hold[threadIdx.x] = 1;
  stamp_end(s);
}

int main() {
  int least = 0, greatest = 0;
  CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  CHECK(cudaFuncSetAttribute(stand_in, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             kStandInSharedBytes));
  std::uint32_t* x;
  float* g;
  Stamps* stamps;
  CHECK(cudaMalloc(&x, kElements * sizeof(std::uint32_t)));
  CHECK(cudaMalloc(&g, kElements * sizeof(float)));
  CHECK(cudaMemset(x, 0x5a, kElements * sizeof(std::uint32_t)));
  CHECK(cudaMallocManaged(&stamps, sizeof(Stamps) * 2 * kBuckets));
  const std::size_t bucket = kElements / kBuckets;
  const unsigned blocks = unsigned((bucket + 255) / 256);

  for (int priority : {least, greatest}) {
    cudaStream_t compute, comm;
    CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithPriority(&comm, cudaStreamNonBlocking, priority));
    std::vector<cudaEvent_t> ready(kBuckets);
    for (auto& e : ready) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    double wait_sum = 0, span_sum = 0, standin_sum = 0;
    const int steps = 5;
    for (int step = 0; step <= steps; ++step) {  // step 0 warms up
      for (int i = 0; i < 2 * kBuckets; ++i) stamps[i] = {~0ull, 0ull};
      for (int b = 0; b < kBuckets; ++b) {
        gradient<<<blocks, 256, 0, compute>>>(x + b * bucket, g + b * bucket, bucket, kRounds,
                                              &stamps[2 * b]);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(ready[b], compute));
        CHECK(cudaStreamWaitEvent(comm, ready[b]));
        stand_in<<<kStandInBlocks, 1024, kStandInSharedBytes, comm>>>(&stamps[2 * b + 1],
                                                                      kStandInNs);
        CHECK(cudaGetLastError());
      }
      CHECK(cudaDeviceSynchronize());
      if (step == 0) continue;
      double wait = 0, standin = 0;
      // The last bucket's stand-in has no gradient after it to wait behind: left out.
      for (int b = 0; b + 1 < kBuckets; ++b) {
        wait += double(stamps[2 * b + 1].start) - double(stamps[2 * b].end);
        standin += double(stamps[2 * b + 1].end) - double(stamps[2 * b + 1].start);
      }
      wait_sum += wait / (kBuckets - 1);
      standin_sum += standin / (kBuckets - 1);
      span_sum += double(stamps[2 * kBuckets - 1].end) - double(stamps[0].start);
    }
    std::printf(
        "priority %d (%s): stand-in waits %.1f us after its bucket's gradient, runs %.1f us "
        "(%.0f us alone), step %.3f ms; gradient of one bucket %.1f us\n",
        priority, priority == least ? "normal" : "greatest", wait_sum / steps / 1e3,
        standin_sum / steps / 1e3, kStandInNs / 1e3, span_sum / steps / 1e6,
        (double(stamps[0].end) - double(stamps[0].start)) / 1e3);
    for (auto& e : ready) CHECK(cudaEventDestroy(e));
    CHECK(cudaStreamDestroy(compute));
    CHECK(cudaStreamDestroy(comm));
  }
  return 0;
}
