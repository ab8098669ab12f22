// Lab `occupancy`: one streaming kernel, y[i] = 1.5 x[i] - 0.25, launched with different block
// sizes and shared-memory reservations; then a fixed-cost kernel launched with one block past a
// full wave, and the same work spread over exactly one wave.
//
// What an SM holds at once (the H200: 132 SMs, each with 64 warp slots, at most 32 resident
// blocks, 228 KB of shared memory and 64K registers) is the smallest of four limits: warps,
// blocks, shared memory and registers. The block-size variants meet the block limit, the
// smem-limited variant the shared-memory limit; the kernels need far fewer than the 32
// registers per thread at which registers would start to limit a full SM (their counts are in
// the build's ptxas table and the report's kernel attributes).
//
// Why resident warps matter to a memory-bound kernel: each thread here has one 4-byte load in
// flight, so an SM keeps (resident warps x 32 lanes x 4 B) outstanding. DRAM needs bandwidth x
// latency in flight to stay busy: ~4.2 TB/s (the copy roof) x ~600 ns / 132 SMs ~ 19 KB per SM.
// A full SM (64 warps) keeps 8 KB in flight, and the same one-float-per-thread kernel gets more
// than 8/19 of the copy roof (lab vectorize, `scalar`, in docs/cards.md: the latency is shorter
// than 600 ns when DRAM is not saturated). Half the warps keep half the bytes in flight.
//
// Default size: 2^26 floats, 268 MB read + 268 MB written by the streaming variants (~0.2 ms at
// full occupancy). The tail pair works on its own arrays (69 MB each at the defaults).
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

// y = a x + b with one fused multiply-add: fmaf rounds once on the CPU as on the GPU, so the
// reference matches bit for bit.
constexpr float kA = 1.5f;
constexpr float kB = -0.25f;
__host__ __device__ inline float axpb(float x) {
  return fmaf(kA, x, kB);
}

// The block sizes of the block-size variants, smallest (the baseline) first.
constexpr int kBlockSizes[] = {32, 64, 128, 256, 512, 1024};
constexpr int kLastUnderfilledBlock = 128;

// The `block` parameter: the threads per block of smem-limited and of the tail pair (the
// block-size variants keep their own). The napkin math below is at this default.
constexpr int kDefaultBlock = 256;
// 100 KB per block: each block also costs 1 KB of shared memory the system reserves, so 2 blocks
// take 202 KB of the SM's 228 KB and a third (303 KB) does not fit. Anything between 76 KB and
// 113 KB gives the same 2 blocks per SM.
constexpr std::size_t kReservedSharedBytes = 100 * 1024;

constexpr unsigned kSleepNs = 100;  // nap between clock checks while a task waits

// Every kernel of the lab takes the same arguments; the streaming kernels ignore the cost.
struct KernelArgs {
  const float* x;
  float* y;
  std::size_t n;
  long long cycles_per_element;  // fixed cost of one element in the fixed-cost kernel
};

// ---- block-size variants: one element per thread ----------------------------------------------
// Grid: ceil(n / block) blocks, one element per thread, no loop and no unrolling, on purpose:
// each thread has exactly one 4-byte load in flight, so the bytes an SM keeps in flight are set
// by its resident warps alone, and occupancy is what the variants change.
//
// Resident warps per SM = min(32 blocks, 2048 threads / block) x warps per block:
//   block   32: 32 blocks x  1 warp  = 32 warps (50%)  <- the 32-blocks-per-SM limit binds
//   block   64: 32 blocks x  2 warps = 64 warps (100%)
//   block  128: 16 blocks x  4 warps = 64 warps
//   block  256:  8 blocks x  8 warps = 64 warps
//   block  512:  4 blocks x 16 warps = 64 warps
//   block 1024:  2 blocks x 32 warps = 64 warps
// At 32 threads per block an SM keeps 32 x 32 x 4 B = 4 KB in flight against the ~19 KB that
// would saturate DRAM; the full-occupancy launches keep 8 KB, twice as much.
// Theoretical is not achieved occupancy, though. Each block here lives about a microsecond, and
// the block scheduler cannot refill an SM that fast: the smaller the block, the further achieved
// occupancy falls below theoretical, and only from 256 threads does the kernel hold most of the
// warp slots (docs/cards.md and tests/fixtures/labs/occupancy.json). Small blocks of short
// work starve the SM twice: through the blocks-per-SM limit and through the launch rate. (It also
// makes 2^21 one-warp blocks at the default size, so block launches add to its cost.) With four
// independent loads per thread instead of one, block-32 would keep 16 KB in flight and come close
// to the roof at 50% occupancy: more work per thread is the other way to put bytes in flight, and
// why a tiled kernel can run well with few warps.
//
// From 64 threads up the launches differ only in how blocks retire: a block frees its slots when
// its last warp ends, so 1024-thread blocks leave slots idle a little longer. Expect them close
// to one another, and close to the share of the copy roof the full-occupancy kernel reaches.
__device__ inline void axpb_one_element(const KernelArgs& a) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < a.n) a.y[i] = axpb(a.x[i]);
}

__global__ void axpb_one_per_thread(KernelArgs a) {
  axpb_one_element(a);
}

// ---- smem-limited: the same work, 256-thread blocks, 100 KB of dynamic shared memory each -----
// The kernel never touches its shared memory: the launch reserves it, and the reservation alone
// decides residency. Warps would allow 8 blocks of 256 threads per SM; shared memory allows 2
// (2 x (100 + 1) KB = 202 KB of 228 KB): 16 warps, 25% occupancy, 16 x 32 x 4 B = 2 KB in flight
// per SM, a tenth of what DRAM needs. Expect it ~3x slower than block-256 and far from the
// roofs. The kernel has its own function, not the block-size one, so that the attributes set on
// it (the 100 KB opt-in above the 48 KB default, and the carveout that gives shared memory the
// whole 228 KB) leave the block-size launches alone.
__global__ void axpb_shared_reserved(KernelArgs a) {
  axpb_one_element(a);
}

// ---- the tail pair: fixed-cost elements --------------------------------------------------------
// Each element stands for a task of fixed latency (a chain of dependent steps, a wait on another
// device): the thread computes y = axpb(x) and then waits `cycles_per_element` SM cycles, napping
// between clock checks so that the waiting warps leave the SM's pipes and DRAM idle. What the
// lesson needs is a block whose duration does not depend on how many blocks share its SM. With
// throughput-bound work the lone block of a second wave would have the SM (an FMA loop: 2-4x
// faster alone) or DRAM (a memory stream: far more) to itself and finish early, which hides part
// of the tail: that is why real tails often cost less than a whole wave.
//
// Both variants run this kernel over the same n = (W + 1) x 256 x items elements, where
// W = SMs x blocks per SM (132 x 8 = 1056 on the H200, from the occupancy API at setup), with a
// grid-stride loop; only the grid differs.
//   one-extra-block: W + 1 blocks, every thread exactly `items` elements. W blocks run in the
//     first wave; block W + 1 waits for a slot and runs alone in a second wave, as long as the
//     first: 2 x items x cycles (~2.1 ms at the defaults, 64 x 32768 cycles at 1.98 GHz per
//     wave). Waves = 1057 / 1056: the last wave leaves 1055 of its 1056 slots idle.
//   balanced: W blocks, one wave, the same elements spread by the loop: 256 x items threads do
//     items + 1 elements, the others items. Time: (items + 1) x cycles (~1.1 ms), so the pair
//     differs by 2 items / (items + 1) ~ 1.97x at the defaults.
__device__ inline void wait_cycles(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) __nanosleep(kSleepNs);
}

__global__ void axpb_fixed_cost(KernelArgs a) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
#pragma unroll 1
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < a.n;
       i += stride) {
    const float v = axpb(a.x[i]);
    wait_cycles(a.cycles_per_element);
    a.y[i] = v;
  }
}

// ---- the lab ----------------------------------------------------------------------------------

using KernelFn = void (*)(KernelArgs);

// Which computation a variant does: the streaming y = axpb(x) over `size` elements, or the
// fixed-cost elements of the tail pair (their own arrays, work model and reference).
enum class Workload { stream, fixed_cost };

// How many blocks a variant launches.
enum class GridShape {
  cover_elements,  // ceil(size / block): one element per thread
  wave_plus_one,   // SMs x blocks per SM + 1
  one_wave,        // SMs x blocks per SM
};

struct OccupancyVariant {
  VariantSpec spec;
  Workload workload;
  const char* kernel_name;
  KernelFn kernel;
  int block;  // threads per block; 0: the lab's `block` parameter
  std::size_t dynamic_shared_bytes;
  GridShape grid;
};
using Variants = VariantTable<OccupancyVariant>;

OccupancyVariant block_size_variant(int block) {
  const int warps = block / 32;
  const int blocks_per_sm = std::min(32, 2048 / block);  // H200: 32 blocks, 64 warps per SM
  const int resident = blocks_per_sm * warps;
  const bool baseline = block == kBlockSizes[0];
  // Measured on the H200: blocks this short leave the SM underfilled up to 128 threads (see the
  // comment above the kernel), so those launches still carry low occupancy.
  const bool underfilled = block <= kLastUnderfilledBlock;
  std::string description = fmt::format(
      "{}-thread blocks, one float per thread: {} blocks x {} warp{} = {} of 64 warp slots{}",
      block, blocks_per_sm, warps, warps == 1 ? "" : "s", resident,
      baseline ? " (the 32-blocks-per-SM limit)" : "");
  return {{fmt::format("block-{}", block), baseline ? Role::baseline : Role::optimized,
           std::move(description), underfilled ? "low-occupancy" : ""},
          Workload::stream,
          "axpb_one_per_thread",
          axpb_one_per_thread,
          block,
          0,
          GridShape::cover_elements};
}

std::vector<OccupancyVariant> variant_table() {
  std::vector<OccupancyVariant> t;
  for (int block : kBlockSizes) t.push_back(block_size_variant(block));
  t.push_back({{"smem-limited", Role::optimized,
                "blocks of `block` threads reserving 100 KB of shared memory each: 2 blocks per "
                "SM, 16 of 64 warp slots at 256 threads",
                "low-occupancy"},
               Workload::stream,
               "axpb_shared_reserved",
               axpb_shared_reserved,
               0,
               kReservedSharedBytes,
               GridShape::cover_elements});
  t.push_back(
      {{"one-extra-block", Role::optimized,
        "fixed-cost blocks of `block` threads, one full wave + 1 block: the last block runs alone",
        "tail-effect"},
       Workload::fixed_cost,
       "axpb_fixed_cost",
       axpb_fixed_cost,
       0,
       0,
       GridShape::wave_plus_one});
  t.push_back({{"balanced", Role::optimized,
                "the same fixed-cost elements, grid-stride over exactly one wave of blocks", ""},
               Workload::fixed_cost,
               "axpb_fixed_cost",
               axpb_fixed_cost,
               0,
               0,
               GridShape::one_wave});
  return t;
}

// SMs x blocks of the fixed-cost kernel (of `block` threads) that fit on one SM at once: one full
// wave.
unsigned full_wave_blocks(int block) {
  int device = 0, sms = 0, blocks_per_sm = 0;
  GPULAB_CUDA_CHECK(cudaGetDevice(&device));
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  GPULAB_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, axpb_fixed_cost, block, 0));
  return static_cast<unsigned>(sms) * static_cast<unsigned>(std::max(blocks_per_sm, 1));
}

class OccupancyRun final : public LabRun {
 public:
  OccupancyRun(const Variants& variants, std::size_t n, int block, int tail_items,
               long long tail_cycles, std::uint64_t seed)
      : variants_(variants),
        n_(n),
        tail_cycles_(tail_cycles),
        block_(block),
        wave_blocks_(full_wave_blocks(block)),
        task_n_(static_cast<std::size_t>(wave_blocks_ + 1) * block * tail_items),
        host_x_(n_),
        host_task_x_(task_n_) {
    require_device_memory(2 * (n_ + task_n_) * sizeof(float), "occupancy at this size");
    x_ = DeviceBuffer<float>(n_);
    y_ = DeviceBuffer<float>(n_);
    task_x_ = DeviceBuffer<float>(task_n_);
    task_y_ = DeviceBuffer<float>(task_n_);
    fill_uniform(host_x_, seed);
    fill_uniform(host_task_x_, stream_seed(seed, 1));
    GPULAB_CUDA_CHECK(cudaMemcpy(x_.get(), host_x_.data(), x_.bytes(), cudaMemcpyHostToDevice));
    GPULAB_CUDA_CHECK(
        cudaMemcpy(task_x_.get(), host_task_x_.data(), task_x_.bytes(), cudaMemcpyHostToDevice));

    // The shared-memory-limited kernel: opt in above the 48 KB default, and ask for the largest
    // shared-memory carveout so that both 100 KB blocks fit (the occupancy API, and with it the
    // report's blocks per SM, honours the same preference).
    int device = 0, optin = 0;
    GPULAB_CUDA_CHECK(cudaGetDevice(&device));
    GPULAB_CUDA_CHECK(
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (static_cast<std::size_t>(optin) >= kReservedSharedBytes) {
      GPULAB_CUDA_CHECK(cudaFuncSetAttribute(axpb_shared_reserved,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(kReservedSharedBytes)));
      GPULAB_CUDA_CHECK(cudaFuncSetAttribute(axpb_shared_reserved,
                                             cudaFuncAttributePreferredSharedMemoryCarveout,
                                             cudaSharedmemCarveoutMaxShared));
    } else {
      shared_skip_ = fmt::format("needs {} KB of shared memory per block; this GPU allows {} KB",
                                 kReservedSharedBytes / 1024, optin / 1024);
    }
  }

  // The streaming computation: n floats read, n written, one multiply-add each.
  report::WorkModel work() const override {
    const double bytes = static_cast<double>(n_) * sizeof(float);
    return {bytes, bytes, 2.0 * static_cast<double>(n_)};
  }

  // The tail pair moves its own arrays; their fixed wait is time, not bytes or flops.
  std::optional<report::WorkModel> variant_work(const std::string& variant) const override {
    if (variants_[variant].workload != Workload::fixed_cost) return std::nullopt;
    const double bytes = static_cast<double>(task_n_) * sizeof(float);
    return report::WorkModel{bytes, bytes, 2.0 * static_cast<double>(task_n_)};
  }

  std::optional<std::string> skip_reason(const std::string& variant) const override {
    if (variants_[variant].dynamic_shared_bytes > 0 && !shared_skip_.empty())
      return shared_skip_;
    return std::nullopt;
  }

  std::vector<KernelLaunch> kernels(const std::string& variant) const override {
    const auto& v = variants_[variant];
    return {{v.kernel_name, reinterpret_cast<const void*>(v.kernel), grid(v), dim3(block_of(v)),
             v.dynamic_shared_bytes}};
  }

  void launch(const std::string& variant, cudaStream_t stream) override {
    const auto& v = variants_[variant];
    v.kernel<<<grid(v), block_of(v), v.dynamic_shared_bytes, stream>>>(args(v.workload));
    GPULAB_CUDA_CHECK_LAUNCH();
  }

  void poison_outputs(cudaStream_t stream) override {
    poison(y_.get(), y_.bytes(), stream);
    poison(task_y_.get(), task_y_.bytes(), stream);
  }

  report::Check check(const std::string& variant) override {
    const bool stream = variants_[variant].workload == Workload::stream;
    const auto& in = stream ? host_x_ : host_task_x_;
    auto& ref = stream ? reference_ : task_reference_;
    const auto& out = stream ? y_ : task_y_;
    if (ref.empty()) {
      ref.resize(in.size());
      parallel_for(in.size(), [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) ref[i] = axpb(in[i]);
      });
    }
    return check_result(out.get(), ref, Tolerance{0, 0});  // one fmaf each side
  }

 private:
  const Variants& variants_;

  KernelArgs args(Workload w) const {
    if (w == Workload::stream) return {x_.get(), y_.get(), n_, 0};
    return {task_x_.get(), task_y_.get(), task_n_, tail_cycles_};
  }

  int block_of(const OccupancyVariant& v) const { return v.block > 0 ? v.block : block_; }

  dim3 grid(const OccupancyVariant& v) const {
    switch (v.grid) {
      case GridShape::cover_elements:
        return dim3(static_cast<unsigned>((n_ + block_of(v) - 1) / block_of(v)));
      case GridShape::wave_plus_one:
        return dim3(wave_blocks_ + 1);
      case GridShape::one_wave:
        return dim3(wave_blocks_);
    }
    return dim3(1);
  }

  std::size_t n_;
  long long tail_cycles_;
  int block_;  // of the variants whose table leaves it to the `block` parameter
  unsigned wave_blocks_;
  std::size_t task_n_;
  std::vector<float> host_x_, host_task_x_;
  std::vector<float> reference_, task_reference_;  // computed on the first check that needs one
  DeviceBuffer<float> x_, y_, task_x_, task_y_;
  std::string shared_skip_;  // why smem-limited cannot run here; empty when it can
};

std::unique_ptr<LabRun> setup_run(const Variants& variants, const ParamValues& params,
                                  std::uint64_t seed) {
  return std::make_unique<OccupancyRun>(variants, static_cast<std::size_t>(params.at("size")),
                                        static_cast<int>(params.at("block")),
                                        static_cast<int>(params.at("tail_items")),
                                        static_cast<long long>(params.at("tail_cycles")), seed);
}

std::unique_ptr<Lab> make_lab() {
  LabSpec spec;
  spec.name = "occupancy";
  spec.topic = "occupancy: block size, shared memory per block, waves and the tail effect";
  spec.summary =
      "y = 1.5x - 0.25 with blocks of 32-1024 threads and 100 KB of shared memory; a grid one "
      "block past a full wave";
  spec.teaching_point =
      "A memory-bound kernel hides DRAM latency with resident warps, each holding loads in "
      "flight. Blocks of 32 threads hit the limit of 32 blocks per SM at half the warp slots, "
      "and 100 KB of shared memory per block leaves room for only 2 blocks, a quarter; both "
      "starve DRAM. Achieved occupancy is lower still when blocks are short: the SM cannot be "
      "refilled as fast as one-element-per-thread blocks finish, so 64 and 128 threads per block "
      "fill only a quarter and two fifths of it, and 256 is where this kernel runs best. The "
      "grid's shape counts too: one full wave of long blocks plus one more runs that block "
      "alone afterwards and nearly doubles the time, while the same work spread by a "
      "grid-stride loop over exactly one wave finishes in one.";
  spec.params = {
      {"size", "elements of the streaming variants (floats per buffer)", 1 << 26, 1, 1 << 28, true},
      // At 1024 threads the 100 KB reservations no longer limit smem-limited (2 blocks of 32 warps
      // fill the SM's 64 slots), and the tail pair's waves hold 2 blocks per SM instead of 8:
      // `gpulab sweep occupancy --axis block=32:1024:*2 --diagnose` shows where findings change.
      {"block", "threads per block of smem-limited and the tail pair (block-N keep theirs)",
       kDefaultBlock, 32, 1024, false},
      {"tail_items",
       "elements per thread of the one-extra-block grid (the tail pair's work per block)", 64, 1,
       256, false},
      {"tail_cycles", "SM clock cycles each element of the tail pair waits (its fixed cost)", 32768,
       0, 1 << 18, false},
  };
  return make_table_lab(std::move(spec), variant_table(), setup_run);
}

}  // namespace
}  // namespace gpulab::labs

GPULAB_REGISTER_LAB(gpulab::labs::make_lab)
