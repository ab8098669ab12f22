// Lab `reduction`: the sum of n floats.
//
// A sum reads every input once and writes a single number, so its roof is the read bandwidth:
// 2^26 floats are 268 MB, ~64 us at the H200's ~4.2 TB/s copy roof. The first three variants
// are the textbook shared-memory tree, one input per thread: a block of 256 threads stages 256
// floats in shared memory and halves them in 8 steps to one partial sum, and a second small
// kernel adds the per-block partials. They differ only in which shared-memory words the tree
// touches. The last two read many elements per thread and use shared memory once per warp:
// the hand-written one and CUB's, the reference.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

#include <fmt/format.h>
#include <cub/device/device_reduce.cuh>

#include "labs/harness/check.hpp"
#include "labs/harness/cuda_check.hpp"
#include "labs/harness/device_buffer.hpp"
#include "labs/harness/harness.hpp"
#include "labs/harness/random.hpp"
#include "labs/harness/registry.hpp"
#include "labs/harness/table_lab.hpp"

namespace gpulab::labs {
namespace {

constexpr int kBlock = 256;  // threads per block of the tree and warp-shuffle kernels
constexpr int kWarps = kBlock / 32;
constexpr int kFinishThreads = 1024;  // the one block that adds the tree's partial sums
constexpr int kUnroll = 4;            // float4 loads in flight per thread (warp-shuffle)
constexpr unsigned kFullMask = 0xffffffffu;

// CUB's DeviceReduce::Sum on sm_90 (cub/device/dispatch/dispatch_reduce.cuh with Policy600 of
// tuning_reduce.cuh, CCCL 3.0): up to one tile of 256 threads x 16 items it launches one
// kernel, DeviceReduceSingleTileKernel; above that two, DeviceReduceKernel (one partial per
// block of an even-share grid) and DeviceReduceSingleTileKernel over those partials.
constexpr std::size_t kCubTileItems = 256 * 16;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(kFullMask, v, offset);
  return v;
}

// All three trees share one detail: warps with no work in a step skip it with a warp-uniform
// branch. Left to itself the compiler predicates the short step body, and a warp with every
// lane predicated off still issues the shared loads and stores: counted as instructions, yet
// moving no data, they would dilute the per-instruction wavefront counters that show the bank
// conflicts. The __syncwarp() in the skipped region makes ptxas branch instead.

// ---- the shared-memory tree, interleaved addressing ------------------------------------------
// Step s (s = 1, 2, 4, ... 128) lets thread t add word 2*s*t + s into word 2*s*t. The active
// threads are packed at the front (t < 128/s), so whole warps retire early, but a warp's 32
// addresses are 2*s words apart. Shared memory has 32 banks of 4 bytes and a warp needs one
// wavefront per distinct word in its busiest bank: 4 words apart puts 4 lanes in each bank
// (4 wavefronts), 8 apart -> 8, and from s = 8 on the 16 or fewer active lanes share one or two
// banks: 8-way again, then 4-, 2-way as they thin out. (Step 1 reads words 2t and 2t+1, which the
// compiler fuses into one 8-byte load: 2 wavefronts, the minimum for 256 bytes; its store is
// 2-way.) Per block of 256 inputs: ~21 shared loads taking ~87 wavefronts (~4 per load) and ~35
// store wavefronts beyond one per store, against ~45 for a conflict-free tree; at 262,144 blocks
// for 2^26 inputs the shared pipe does ~3x the passes it needs.
// Yet the passes are not what sets the time. The padded tree (below) removes nearly all the
// excess wavefronts and is no faster: the counters of both are in the recorded reports
// (tests/fixtures/labs/reduction.json), their times in docs/cards.md. Warps wait far longer at
// the 9 barriers than on the shared-memory pipe (short scoreboard and MIO throttle stalls are a
// small part of their cycles per instruction): the conflicted wavefronts drain while warps wait
// for their block, and what the tree costs is its barriers with most warps idle. The padding's
// extra index arithmetic then makes it slower.
struct PlainSlots {
  static constexpr int kWords = kBlock;
  __device__ static int at(int i) { return i; }
};

// The same tree with one unused word after every 32: word i lives at i + i/32. Lanes whose
// words were 32 apart (the same bank) now land one bank apart; for every step of a 256-thread
// tree the active lanes of a warp hit 32 (or as many as are active) different banks: 1
// wavefront per load and store, the ideal. Cost: 8 words of shared memory per block.
struct PaddedSlots {
  static constexpr int kWords = kBlock + kBlock / 32;
  __device__ static int at(int i) { return i + (i >> 5); }
};

template <typename Slots>
__global__ void __launch_bounds__(kBlock)
    reduce_interleaved(const float* __restrict__ in, float* __restrict__ partials, size_t n) {
  __shared__ float s[Slots::kWords];
  const int tid = threadIdx.x;
  const size_t i = static_cast<size_t>(blockIdx.x) * kBlock + tid;
  s[Slots::at(tid)] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int stride = 1; stride < kBlock; stride *= 2) {
    if (2 * stride * (tid & ~31) < kBlock) {  // the warp has work in this step (see above)
      const int index = 2 * stride * tid;
      // PROBLEM: interleaved addressing: lanes 2 x stride words apart share shared-memory banks
      if (index < kBlock) s[Slots::at(index)] += s[Slots::at(index + stride)];
      __syncwarp();
    }
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = s[Slots::at(0)];
}

// ---- the shared-memory tree, sequential addressing -------------------------------------------
// Step s (s = 128, 64, ... 1) lets thread t < s add word t + s into word t. A warp's active
// lanes read 32 consecutive words, one per bank: 1 wavefront per instruction with no padding,
// and the active threads fill whole warps until s < 32, so fewer warps issue each step than in
// the interleaved tree.
// Its last six steps (s = 32 ... 1) involve warp 0 alone, so they need no block barrier: the
// other warps leave, and warp 0 orders its own steps with __syncwarp(). That leaves 3 barriers
// per block of 256 inputs instead of the 9 the interleaved trees wait at (their cost, see
// above). With all 9 barriers kept, this tree waited at them for about a third of its warps'
// cycles and was measurably slower than with 3.
// What remains is the tree itself: one 4-byte load per thread, too few bytes in flight per SM
// to reach the roof.
__global__ void __launch_bounds__(kBlock)
    reduce_sequential(const float* __restrict__ in, float* __restrict__ partials, size_t n) {
  __shared__ float s[kBlock];
  const int tid = threadIdx.x;
  const size_t i = static_cast<size_t>(blockIdx.x) * kBlock + tid;
  s[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 32; stride >>= 1) {
    if ((tid & ~31) < stride) {  // the warp has work in this step
      if (tid < stride) s[tid] += s[tid + stride];
      __syncwarp();
    }
    __syncthreads();
  }
  if (tid >= 32) return;
  // Warp 0 adds words 0..63 down to one. Lane t writes word t and reads word t + s, which no
  // lane writes in the same step; __syncwarp() makes each step's stores visible to the next.
  for (int stride = 32; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncwarp();
  }
  if (tid == 0) partials[blockIdx.x] = s[0];
}

// Second pass of the tree variants: one block adds the per-block partials (262,144 floats,
// 1 MB, for 2^26 inputs: a few microseconds) and writes the result. A plain store, so every
// launch overwrites the result and nothing needs resetting.
__global__ void __launch_bounds__(kFinishThreads)
    reduce_finish(const float* __restrict__ partials, float* __restrict__ out, int count) {
  __shared__ float warp_sums[kFinishThreads / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float acc = 0.0f;
  for (int i = threadIdx.x; i < count; i += kFinishThreads) acc += partials[i];
  acc = warp_sum(acc);
  if (lane == 0) warp_sums[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = warp_sum(warp_sums[lane]);
    if (lane == 0) *out = acc;
  }
}

// ---- many elements per thread, shuffles within warps -----------------------------------------
// A grid of just enough blocks to fill the GPU walks the input with 16-byte loads, kUnroll = 4
// of them in flight per thread: 64 B per thread, ~128 KB per SM at full occupancy, plenty to
// cover DRAM latency at 4.2 TB/s. Each thread adds ~250 elements (2^26 inputs, 132 SMs) in
// registers; then 5 shuffle steps reduce a warp without shared memory or barriers, one shared
// word per warp carries the 8 warp sums to warp 0, and one atomicAdd per block (~1,000 in all,
// to one address: microseconds) adds the block's sum to the result. The kernel is a read
// stream with a little arithmetic: it should run at the copy roof.
__global__ void zero_result(float* out) {
  *out = 0.0f;
}

__global__ void __launch_bounds__(kBlock)
    reduce_warp_shuffle(const float* __restrict__ in, float* __restrict__ out, size_t n) {
  __shared__ float warp_sums[kWarps];
  const float4* in4 = reinterpret_cast<const float4*>(in);  // cudaMalloc aligns to 256 B
  const size_t n4 = n / 4;
  const size_t stride = static_cast<size_t>(gridDim.x) * kBlock;
  const size_t first = static_cast<size_t>(blockIdx.x) * kBlock + threadIdx.x;
  float acc = 0.0f;
  size_t v = first;
  for (; v + (kUnroll - 1) * stride < n4; v += kUnroll * stride) {
    float4 x[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) x[u] = in4[v + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc += (x[u].x + x[u].y) + (x[u].z + x[u].w);
  }
  for (; v < n4; v += stride) {
    const float4 x = in4[v];
    acc += (x.x + x.y) + (x.z + x.w);
  }
  if (first < n - 4 * n4) acc += in[4 * n4 + first];  // the last n % 4 elements

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  acc = warp_sum(acc);
  if (lane == 0) warp_sums[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = warp_sum(lane < kWarps ? warp_sums[lane] : 0.0f);
    if (lane == 0) atomicAdd(out, acc);
  }
}

// ---- the lab ----------------------------------------------------------------------------------

using TreeKernel = void (*)(const float*, float*, size_t);

// How a variant forms the sum: a tree kernel plus reduce_finish, zero_result plus
// reduce_warp_shuffle, or CUB.
enum class Scheme { tree, warp_shuffle, cub };

struct ReductionVariant {
  VariantSpec spec;
  Scheme scheme;
  const char* tree_kernel_name;  // Scheme::tree only
  TreeKernel tree_kernel;        // Scheme::tree only
};
using Variants = VariantTable<ReductionVariant>;

std::vector<ReductionVariant> variant_table() {
  return {
      {{"interleaved", Role::baseline,
        "shared-memory tree, thread t adds word 2st+s into 2st: strided words, bank conflicts",
        "sync-overhead"},
       Scheme::tree,
       "reduce_interleaved",
       reduce_interleaved<PlainSlots>},
      {{"interleaved-padded", Role::optimized,
        "the same tree with word i stored at i + i/32: no bank conflicts, and no faster",
        "sync-overhead"},
       Scheme::tree,
       "reduce_interleaved_padded",
       reduce_interleaved<PaddedSlots>},
      {{"sequential", Role::optimized,
        "shared-memory tree, thread t < s adds word t+s into t: no conflicts, the last 32 words "
        "in one warp",
        ""},
       Scheme::tree,
       "reduce_sequential",
       reduce_sequential},
      {{"warp-shuffle", Role::optimized,
        "grid-stride float4 sums in registers, warp shuffles, one atomicAdd per block",
        "memory-bound-at-roof"},
       Scheme::warp_shuffle,
       nullptr,
       nullptr},
      {{"cub", Role::reference, "cub::DeviceReduce::Sum", "memory-bound-at-roof"},
       Scheme::cub,
       nullptr,
       nullptr},
  };
}

class ReductionRun final : public LabRun {
 public:
  ReductionRun(const Variants& variants, size_t n, std::uint64_t seed)
      : variants_(variants), n_(n), host_in_(n), tree_blocks_((n + kBlock - 1) / kBlock) {
    int device = 0, sm_count = 0, blocks_per_sm = 0;
    GPULAB_CUDA_CHECK(cudaGetDevice(&device));
    GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks_per_sm, reduce_warp_shuffle, kBlock, 0));
    const size_t vector_blocks = (n / 4 + kBlock - 1) / kBlock;
    shuffle_blocks_ = std::max<size_t>(
        1, std::min<size_t>(static_cast<size_t>(sm_count) * std::max(blocks_per_sm, 1),
                            vector_blocks));
    cub_reduce_blocks_ = (n + kCubTileItems - 1) / kCubTileItems;

    GPULAB_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, cub_temp_bytes_,
                                             static_cast<const float*>(nullptr),
                                             static_cast<float*>(nullptr), static_cast<int>(n)));
    require_device_memory(n * sizeof(float) + tree_blocks_ * sizeof(float) + cub_temp_bytes_ + 256,
                          "reduction at this size");
    in_ = DeviceBuffer<float>(n);
    partials_ = DeviceBuffer<float>(tree_blocks_);
    out_ = DeviceBuffer<float>(1);
    cub_temp_ = DeviceBuffer<unsigned char>(std::max<size_t>(cub_temp_bytes_, 1));
    fill_uniform(host_in_, seed);
    GPULAB_CUDA_CHECK(cudaMemcpy(in_.get(), host_in_.data(), in_.bytes(), cudaMemcpyHostToDevice));
    // Pageable copies may still be in flight when cudaMemcpy returns; the harness launches on
    // a non-blocking stream, which does not wait for them.
    GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
  }

  report::WorkModel work() const override {
    // Every input read once, one float written; one add per input.
    return {static_cast<double>(n_) * sizeof(float), sizeof(float), static_cast<double>(n_)};
  }

  std::vector<KernelLaunch> kernels(const std::string& variant) const override {
    const auto& v = variants_[variant];
    switch (v.scheme) {
      case Scheme::tree:
        return {{v.tree_kernel_name, reinterpret_cast<const void*>(v.tree_kernel), tree_grid(),
                 dim3(kBlock), 0},
                {"reduce_finish", reinterpret_cast<const void*>(reduce_finish), dim3(1),
                 dim3(kFinishThreads), 0}};
      case Scheme::warp_shuffle:
        return {{"zero_result", reinterpret_cast<const void*>(zero_result), dim3(1), dim3(1), 0},
                {"reduce_warp_shuffle", reinterpret_cast<const void*>(reduce_warp_shuffle),
                 shuffle_grid(), dim3(kBlock), 0}};
      case Scheme::cub:
        // CUB chooses its grids; the reduce kernel's is at most one block per tile.
        if (n_ <= kCubTileItems)
          return {{"cub::DeviceReduceSingleTileKernel", nullptr, dim3(1), dim3(256), 0}};
        return {{"cub::DeviceReduceKernel", nullptr,
                 dim3(static_cast<unsigned>(cub_reduce_blocks_)), dim3(256), 0},
                {"cub::DeviceReduceSingleTileKernel", nullptr, dim3(1), dim3(256), 0}};
    }
    return {};
  }

  void launch(const std::string& variant, cudaStream_t stream) override {
    const auto& v = variants_[variant];
    switch (v.scheme) {
      case Scheme::tree:
        v.tree_kernel<<<tree_grid(), kBlock, 0, stream>>>(in_.get(), partials_.get(), n_);
        GPULAB_CUDA_CHECK_LAUNCH();
        reduce_finish<<<1, kFinishThreads, 0, stream>>>(partials_.get(), out_.get(),
                                                        static_cast<int>(tree_blocks_));
        GPULAB_CUDA_CHECK_LAUNCH();
        return;
      case Scheme::warp_shuffle:
        zero_result<<<1, 1, 0, stream>>>(out_.get());
        GPULAB_CUDA_CHECK_LAUNCH();
        reduce_warp_shuffle<<<shuffle_grid(), kBlock, 0, stream>>>(in_.get(), out_.get(), n_);
        GPULAB_CUDA_CHECK_LAUNCH();
        return;
      case Scheme::cub: {
        size_t bytes = cub_temp_bytes_;
        GPULAB_CUDA_CHECK(cub::DeviceReduce::Sum(cub_temp_.get(), bytes, in_.get(), out_.get(),
                                                 static_cast<int>(n_), stream));
        GPULAB_CUDA_CHECK_LAUNCH();
        return;
      }
    }
  }

  void poison_outputs(cudaStream_t stream) override {
    poison(out_.get(), out_.bytes(), stream);
    poison(partials_.get(), partials_.bytes(), stream);
  }

  // The reference is the sum in double. The tolerance is one float epsilon of sum |x|: what a
  // single rounding at the scale of all the magnitudes would cost (4.0 for 2^26 inputs in
  // [-1, 1)); it covers every rounding of a float sum of up to 3 terms, and at large n the
  // real error is far smaller, because the partial sums of signed inputs cancel (expected
  // around 1e-2 for 2^26 inputs). A lost element or block shows up at the small sizes the
  // tests run, where the tolerance is a few thousandths.
  report::Check check(const std::string& /*variant*/) override {
    if (!reference_computed_) {
      double sum = 0, magnitude = 0;
      for (float x : host_in_) {
        sum += x;
        magnitude += std::fabs(x);
      }
      reference_ = sum;
      tolerance_ = FLT_EPSILON * magnitude;
      reference_computed_ = true;
    }
    float got = 0;
    GPULAB_CUDA_CHECK(cudaMemcpy(&got, out_.get(), sizeof(float), cudaMemcpyDeviceToHost));

    report::Check c;
    c.elements = 1;
    c.tolerance_abs = tolerance_;
    c.tolerance_rel = 0;
    const double err = std::fabs(static_cast<double>(got) - reference_);
    c.max_abs_error = std::isnan(err) ? INFINITY : err;
    c.max_rel_error = reference_ != 0 ? c.max_abs_error / std::fabs(reference_) : c.max_abs_error;
    if (err <= tolerance_) {  // false for NaN
      c.status = report::CheckStatus::passed;
    } else {
      c.status = report::CheckStatus::failed;
      c.mismatches = 1;
      c.message = fmt::format("sum of {} floats: got {}, expected {:.6f} (tolerance {:.3g})", n_,
                              got, reference_, tolerance_);
    }
    return c;
  }

 private:
  const Variants& variants_;

  dim3 tree_grid() const { return dim3(static_cast<unsigned>(tree_blocks_)); }
  dim3 shuffle_grid() const { return dim3(static_cast<unsigned>(shuffle_blocks_)); }

  size_t n_;
  std::vector<float> host_in_;
  size_t tree_blocks_;
  size_t shuffle_blocks_ = 1;
  size_t cub_reduce_blocks_ = 1;
  size_t cub_temp_bytes_ = 0;
  bool reference_computed_ = false;
  double reference_ = 0;
  double tolerance_ = 0;
  DeviceBuffer<float> in_, partials_, out_;
  DeviceBuffer<unsigned char> cub_temp_;
};

std::unique_ptr<LabRun> setup_run(const Variants& variants, const ParamValues& params,
                                  std::uint64_t seed) {
  return std::make_unique<ReductionRun>(variants, static_cast<size_t>(params.at("n")), seed);
}

std::unique_ptr<Lab> make_lab() {
  LabSpec spec;
  spec.name = "reduction";
  spec.topic = "shared-memory bank conflicts, warp shuffles, work per thread";
  spec.summary = "sum of n floats: from the textbook shared-memory tree to a read stream";
  spec.teaching_point =
      "A tree that adds word 2st+s into word 2st sends a warp's lanes to addresses a power of "
      "two apart, so they pile up in a few shared-memory banks and each step takes several "
      "passes; padding one word per 32 removes the conflicts, yet it does not make the tree "
      "faster: its warps wait at the barrier of every step, and the extra passes drain while "
      "they do. Letting thread t add word t+s into t keeps the working lanes in fewer warps, and "
      "once one warp holds the rest it needs no block barrier: fewer barriers, a faster tree, "
      "but still one load per thread, which leaves the memory system idle. Summing many float4 "
      "loads per thread in registers and finishing with warp shuffles turns the sum into a read "
      "stream, as fast as CUB's.";
  spec.params = {
      {"n", "number of floats to sum", std::int64_t{1} << 26, 1, std::int64_t{1} << 30, true},
  };
  return make_table_lab(std::move(spec), variant_table(), setup_run);
}

}  // namespace
}  // namespace gpulab::labs

GPULAB_REGISTER_LAB(gpulab::labs::make_lab)
