// Lab `atomics`: count the positive elements of n floats drawn from [-1, 1).
//
// The count is one integer, so every thread must eventually add into the same counter. How many
// atomic operations reach that one address decides the speed: an atomic read-modify-write on a
// single word is serialized in the L2 slice that owns it, so the work that can go in parallel
// has to be combined *before* the atomic. 2^26 inputs are 268 MB, ~64 us of reading at the
// H200's ~4.2 TB/s copy roof; about half of them (~33.5 million) are positive.
//
// Every variant launches two kernels: reset_counter (one thread stores 0) and the counting
// kernel. The reset makes each launch start from zero, as the harness and the profiler replay
// launches; it costs a launch, a few microseconds, and is listed among the kernels.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "labs/harness/check.hpp"
#include "labs/harness/cuda_check.hpp"
#include "labs/harness/device_buffer.hpp"
#include "labs/harness/harness.hpp"
#include "labs/harness/random.hpp"
#include "labs/harness/registry.hpp"
#include "labs/harness/table_lab.hpp"

namespace gpulab::labs {
namespace {

constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;
constexpr int kUnroll = 4;  // float4 loads in flight per thread (warp-aggregated)
constexpr unsigned kFullMask = 0xffffffffu;

// What a counting kernel needs. `slot_mask` is 0 at run time; only global-atomic reads it
// (see there why).
struct CountArgs {
  const float* in;
  unsigned* counter;
  size_t n;
  unsigned slot_mask;
};

__global__ void reset_counter(unsigned* counter) {
  *counter = 0;
}

// Chunk c is elements 4c .. 4c+3: one 16-byte load when it lies wholly inside the input, else
// the elements that exist; elements past n read as 0, which is not positive.
__device__ __forceinline__ float4 load_chunk(const float* __restrict__ in, size_t n, size_t c) {
  const size_t i = 4 * c;
  if (i + 3 < n) return reinterpret_cast<const float4*>(in)[c];  // cudaMalloc aligns to 256 B
  float4 x = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (i < n) x.x = in[i];
  if (i + 1 < n) x.y = in[i + 1];
  if (i + 2 < n) x.z = in[i + 2];
  return x;
}

__device__ __forceinline__ unsigned positives(float4 x) {
  return (x.x > 0.0f) + (x.y > 0.0f) + (x.z > 0.0f) + (x.w > 0.0f);
}

// ---- one atomic per positive element ----------------------------------------------------------
// One thread per chunk of 4 elements (one float4 load: the reads are as efficient as they get);
// the thread adds 1 to the counter for each positive element: ~n/2 atomic adds (33.5 million
// for 2^26 inputs) on one 4-byte word. The result is unused, so each is a RED (no value comes
// back) rather than an ATOM, but the L2 slice that owns the word still applies them one after
// another, at most about one per L2 clock: at ~2 GHz, 33.5 million take ~17 ms, 250x the time
// the reads need. Requests: a warp issues 4 REDs per load (one per component), each carrying
// the ~16 lanes whose element is positive: ~n/32 atomic requests, 4 per load request. (Were
// the L2 to merge the lanes of one request, that would still be ~2 million updates in a row,
// ~1 ms.)
//
// Why the address goes through `slot_mask`: written as `atomicAdd(counter, 1)`, ptxas (CUDA
// 13, sm_90) sees a warp-uniform address and aggregates by itself: one vote, one popcount and
// one RED per warp (VOTEU.ANY, POPC, REDG in the SASS). That is the warp-aggregated variant
// done by the compiler, and the cost this lab exists to show would vanish. With the address
// computed from a kernel argument (0 at run time, unknown to the compiler), every lane issues
// its own add: REDG.E.ADD with no vote in front of it.
__global__ void __launch_bounds__(kBlock) count_global_atomic(CountArgs a) {
  const size_t c = static_cast<size_t>(blockIdx.x) * kBlock + threadIdx.x;
  const float4 x = load_chunk(a.in, a.n, c);
  unsigned* counter = a.counter + (threadIdx.x & a.slot_mask);
  // PROBLEM: an atomic per element on the few words every thread updates
  if (x.x > 0.0f) atomicAdd(counter, 1u);
  if (x.y > 0.0f) atomicAdd(counter, 1u);
  if (x.z > 0.0f) atomicAdd(counter, 1u);
  if (x.w > 0.0f) atomicAdd(counter, 1u);
}

// ---- one atomic per block, shared-memory tree -------------------------------------------------
// The same float4 per thread, but each thread counts its 4 elements in a register, the block
// adds its 256 counts in shared memory (8 halving steps over consecutive words: no bank
// conflicts) and one thread adds the block total: n/1024 atomics (65,536 for 2^26 inputs),
// 512x fewer, and one atomic request per 8 load requests. 65,536 serialized updates of one
// word still take ~33 us at one per L2 clock, half the time of the reads, and every block
// waits at 8 barriers: much faster than the baseline, not yet a pure read stream.
__global__ void __launch_bounds__(kBlock) count_block_reduce(CountArgs a) {
  __shared__ unsigned s[kBlock];
  const int tid = threadIdx.x;
  const size_t c = static_cast<size_t>(blockIdx.x) * kBlock + tid;
  s[tid] = positives(load_chunk(a.in, a.n, c));
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(a.counter, s[0]);
}

// ---- warp votes, many elements per thread, one atomic per block ------------------------------
// __ballot_sync gives every lane a 32-bit mask of the lanes whose predicate holds, and __popc
// counts it: two instructions count 32 elements, with no shared memory and no barrier. The
// grid is just large enough to fill the GPU (~1,000 blocks on 132 SMs); each warp walks the
// input with 16-byte loads, 4 in flight per thread, and keeps its running count in a register
// (the same value in every lane). At the end, lane 0 of each warp puts the warp's count in
// shared memory, warp 0 adds the 8 counts with shuffles, and one atomicAdd per block reaches
// the counter: ~1,000 atomics instead of 33.5 million. What is left is reading 268 MB: the
// kernel should run at the copy roof.
__device__ __forceinline__ unsigned positive_votes(float4 x) {
  return __popc(__ballot_sync(kFullMask, x.x > 0.0f)) +
         __popc(__ballot_sync(kFullMask, x.y > 0.0f)) +
         __popc(__ballot_sync(kFullMask, x.z > 0.0f)) +
         __popc(__ballot_sync(kFullMask, x.w > 0.0f));
}

__global__ void __launch_bounds__(kBlock) count_warp_aggregated(CountArgs a) {
  __shared__ unsigned warp_counts[kWarps];
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const float4* in4 = reinterpret_cast<const float4*>(a.in);  // cudaMalloc aligns to 256 B
  const size_t n4 = a.n / 4;
  const size_t stride = static_cast<size_t>(gridDim.x) * kBlock;
  // The loops run on the warp's first vector, the same in all lanes, so that every lane takes
  // part in every vote.
  size_t v0 = static_cast<size_t>(blockIdx.x) * kBlock + warp * 32;
  unsigned count = 0;
  for (; v0 + (kUnroll - 1) * stride + 32 <= n4; v0 += kUnroll * stride) {
    float4 x[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) x[u] = in4[v0 + u * stride + lane];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) count += positive_votes(x[u]);
  }
  for (; v0 < n4; v0 += stride) {
    const size_t v = v0 + lane;
    count += positive_votes(v < n4 ? in4[v] : make_float4(0.0f, 0.0f, 0.0f, 0.0f));
  }
  if (blockIdx.x == 0 && warp == 0) {  // the last n % 4 elements
    const size_t i = 4 * n4 + lane;
    count += __popc(__ballot_sync(kFullMask, i < a.n && a.in[i] > 0.0f));
  }
  if (lane == 0) warp_counts[warp] = count;
  __syncthreads();
  if (warp == 0) {
    unsigned c = lane < kWarps ? warp_counts[lane] : 0u;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) c += __shfl_down_sync(kFullMask, c, offset);
    if (lane == 0) atomicAdd(a.counter, c);
  }
}

// ---- the lab ----------------------------------------------------------------------------------

using CountKernel = void (*)(CountArgs);

struct AtomicsVariant {
  VariantSpec spec;
  const char* kernel_name;
  CountKernel kernel;
  bool persistent_grid;  // a GPU-filling grid-stride grid instead of one thread per chunk of 4
};
using Variants = VariantTable<AtomicsVariant>;

std::vector<AtomicsVariant> variant_table() {
  return {
      {{"global-atomic", Role::baseline,
        "a float4 per thread, one atomicAdd per positive element on one counter: ~n/2 adds",
        "atomic-contention"},
       "count_global_atomic",
       count_global_atomic,
       false},
      {{"block-reduce", Role::optimized,
        "a float4 per thread, shared-memory tree per block, one atomicAdd per 1024 elements", ""},
       "count_block_reduce",
       count_block_reduce,
       false},
      {{"warp-aggregated", Role::optimized,
        "ballot + popc per warp over many float4 per thread, one atomicAdd per block",
        "memory-bound-at-roof"},
       "count_warp_aggregated",
       count_warp_aggregated,
       true},
  };
}

class AtomicsRun final : public LabRun {
 public:
  AtomicsRun(const Variants& variants, size_t n, std::uint64_t seed)
      : variants_(variants), n_(n), host_in_(n) {
    int device = 0, sm_count = 0, blocks_per_sm = 0;
    GPULAB_CUDA_CHECK(cudaGetDevice(&device));
    GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks_per_sm, count_warp_aggregated, kBlock, 0));
    const size_t vector_blocks = (n / 4 + kBlock - 1) / kBlock;
    persistent_blocks_ = std::max<size_t>(
        1, std::min<size_t>(static_cast<size_t>(sm_count) * std::max(blocks_per_sm, 1),
                            vector_blocks));

    require_device_memory(n * sizeof(float) + 256, "atomics at this size");
    in_ = DeviceBuffer<float>(n);
    counter_ = DeviceBuffer<unsigned>(1);
    fill_uniform(host_in_, seed);
    GPULAB_CUDA_CHECK(cudaMemcpy(in_.get(), host_in_.data(), in_.bytes(), cudaMemcpyHostToDevice));
    // Pageable copies may still be in flight when cudaMemcpy returns; the harness launches on
    // a non-blocking stream, which does not wait for them.
    GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
  }

  report::WorkModel work() const override {
    // Every input read once, one 4-byte count written; comparisons are not counted as flops.
    return {static_cast<double>(n_) * sizeof(float), sizeof(unsigned), 0.0};
  }

  std::vector<KernelLaunch> kernels(const std::string& variant) const override {
    const auto& v = variants_[variant];
    return {{"reset_counter", reinterpret_cast<const void*>(reset_counter), dim3(1), dim3(1), 0},
            {v.kernel_name, reinterpret_cast<const void*>(v.kernel), grid(v), dim3(kBlock), 0}};
  }

  void launch(const std::string& variant, cudaStream_t stream) override {
    const auto& v = variants_[variant];
    reset_counter<<<1, 1, 0, stream>>>(counter_.get());
    GPULAB_CUDA_CHECK_LAUNCH();
    v.kernel<<<grid(v), kBlock, 0, stream>>>(CountArgs{in_.get(), counter_.get(), n_, 0u});
    GPULAB_CUDA_CHECK_LAUNCH();
  }

  void poison_outputs(cudaStream_t stream) override {
    // 0xFFFFFFFF: more positives than there can be elements (n <= 2^30).
    poison(counter_.get(), counter_.bytes(), stream);
  }

  report::Check check(const std::string& /*variant*/) override {
    if (!reference_computed_) {
      reference_ = static_cast<std::uint64_t>(
          std::count_if(host_in_.begin(), host_in_.end(), [](float x) { return x > 0.0f; }));
      reference_computed_ = true;
    }
    unsigned got = 0;
    GPULAB_CUDA_CHECK(cudaMemcpy(&got, counter_.get(), sizeof(unsigned), cudaMemcpyDeviceToHost));

    report::Check c;  // an exact count: zero tolerance
    c.elements = 1;
    const double err = std::fabs(static_cast<double>(got) - static_cast<double>(reference_));
    c.max_abs_error = err;
    c.max_rel_error = reference_ > 0 ? err / static_cast<double>(reference_) : err;
    if (got == reference_) {
      c.status = report::CheckStatus::passed;
    } else {
      c.status = report::CheckStatus::failed;
      c.mismatches = 1;
      c.message =
          fmt::format("positive elements among {}: got {}, expected {}", n_, got, reference_);
    }
    return c;
  }

 private:
  const Variants& variants_;

  dim3 grid(const AtomicsVariant& v) const {
    const size_t chunks = (n_ + 3) / 4;
    const size_t blocks = v.persistent_grid ? persistent_blocks_ : (chunks + kBlock - 1) / kBlock;
    return dim3(static_cast<unsigned>(blocks));
  }

  size_t n_;
  std::vector<float> host_in_;
  size_t persistent_blocks_ = 1;
  bool reference_computed_ = false;
  std::uint64_t reference_ = 0;
  DeviceBuffer<float> in_;
  DeviceBuffer<unsigned> counter_;
};

std::unique_ptr<LabRun> setup_run(const Variants& variants, const ParamValues& params,
                                  std::uint64_t seed) {
  return std::make_unique<AtomicsRun>(variants, static_cast<size_t>(params.at("n")), seed);
}

std::unique_ptr<Lab> make_lab() {
  LabSpec spec;
  spec.name = "atomics";
  spec.topic = "atomic contention, warp-aggregated atomics, warp votes";
  spec.summary = "count positive floats: from one atomic per element to one per block";
  spec.teaching_point =
      "Atomic updates of one address are applied one at a time where that address lives, so "
      "millions of threads adding 1 to the same counter wait in a single queue however many "
      "SMs issue them. Combining first and updating once per block (a shared-memory tree) "
      "divides the queue by the elements per block; warp votes counted with __popc over many "
      "elements per thread shrink it to about a thousand, and the count runs as fast as the "
      "input can be read (ptxas does the per-warp step by itself for atomicAdd(p, 1) when it "
      "can prove p is the same in every lane).";
  spec.params = {
      {"n", "number of floats to test", std::int64_t{1} << 26, 1, std::int64_t{1} << 30, true},
  };
  return make_table_lab(std::move(spec), variant_table(), setup_run);
}

}  // namespace
}  // namespace gpulab::labs

GPULAB_REGISTER_LAB(gpulab::labs::make_lab)
