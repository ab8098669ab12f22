// Lab `async-copy`: overlap the copy of the next tile with the arithmetic on this one.
//
// The computation: a rows x cols matrix of floats; out[r] = sum over c of p(in[r][c]), where p is
// a fixed polynomial of degree 32 (the Taylor series of ln(1+x)/x, coefficients (-1)^j/(j+1)),
// evaluated by Horner's rule: 32 dependent FMAs per element. One block of 1024 threads walks one
// row, a tile of 1024 floats (4 KB) at a time: the tile is staged in shared memory, each thread
// evaluates p on one element of it and keeps a running sum, and the block adds its 1024 sums at
// the end. Every variant does exactly this, in the same order, so all produce the same bits.
//
// Napkin math (H200: 132 SMs at up to 1.98 GHz; an SM issues 4 warp instructions per clock, one
// per scheduler, and retires 128 fp32 FMAs per clock; HBM ~4.8 TB/s, ~4.2 TB/s in practice, ~16
// bytes per SM per clock; a load that misses L2 takes ~0.5-0.8 us, ~1,000-1,600 clocks):
//  - Work per tile: 1024 x 32 FMAs = 1,024 warp FFMAs. With 32 warps on 4 schedulers every
//    instruction a thread executes costs the SM 8 issue clocks: the tile's 32 FFMAs + ~13 other
//    instructions (sass, CUDA 13.0) are ~360 clocks, ~0.2 us. That is a third to a quarter of one
//    DRAM round trip: a load that is waited for costs 3-4x the arithmetic it feeds.
//  - Bytes per FMA: 4 bytes per 32 FMAs. An SM issuing at full rate (~1,000 clocks per pair of
//    tiles, below) consumes ~8 B/clock, half its share of DRAM bandwidth: once the loads
//    overlap the arithmetic, instruction issue is the limit, not DRAM.
//  - Occupancy is not the problem: __launch_bounds__(1024, 2) caps registers at 32, so two
//    blocks (64 warps, 100% occupancy) fit on an SM. But all 32 warps of a block reach each
//    __syncthreads together, so an SM holds just two independent streams of work, its two
//    blocks, and each can hide only ~360 clocks of the other's ~1,000-1,600-clock wait.
//
// The default size, 3072 x 131072 floats (1.61 GB, 128 tiles per row, 393,216 tiles, ~2,980 per
// SM), is 12.9 GFMA: ~0.75 ms when issue-bound, ~1.0-1.5 ms with the loads exposed.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <cooperative_groups.h>
#include <fmt/format.h>
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cuda/ptx>
#include <nv/target>

#include "labs/harness/check.hpp"
#include "labs/harness/cuda_check.hpp"
#include "labs/harness/device_buffer.hpp"
#include "labs/harness/harness.hpp"
#include "labs/harness/random.hpp"
#include "labs/harness/registry.hpp"
#include "labs/harness/table_lab.hpp"

namespace gpulab::labs {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 1024;            // one block per row; 32 warps
constexpr int kTile = kThreads;           // floats per tile: one per thread, 4 KB
constexpr int kBlocksPerSm = 2;           // __launch_bounds__ minimum: <= 32 registers
constexpr int kStages = 4;                // shared tile buffers of the pipelined variants
constexpr int kDegree = 32;               // FMAs per element
constexpr int kQuadsPerTile = kTile / 4;  // 16-byte pieces of a full tile
constexpr unsigned kFullMask = 0xffffffffu;
constexpr std::int64_t kMaxElements = std::int64_t{1} << 29;  // 2 GiB of input at most

// Coefficient j of p: (-1)^j / (j + 1), rounded to float the same way on the host and on the
// device (one correctly rounded division of constants). As compile-time constants they become
// FFMA immediates: one instruction per FMA. (Coefficients in a kernel parameter or __constant__
// memory cost an extra uniform load per two FMAs on sm_90: ptxas will not put a constant-bank
// operand in the addend slot of FFMA.)
__host__ __device__ constexpr float coefficient(int j) {
  return (j % 2 == 0 ? 1.0f : -1.0f) / static_cast<float>(j + 1);
}

__device__ __forceinline__ float evaluate(float x) {
  float y = coefficient(kDegree);
#pragma unroll
  for (int j = kDegree - 1; j >= 0; --j) y = fmaf(y, x, coefficient(j));
  return y;
}

// The element of each tile a thread evaluates: the one its neighbour warp fetched (lane l of
// warp w takes word 32 * (w ^ 1) + l). It stands for the cross-thread reuse of a real tiled
// kernel, where the thread that fetches an element is not the only one that reads it; here it
// makes every variant's synchronization necessary (a missing barrier or wait reads another
// warp's unfinished copy and fails the check) and costs nothing: each warp still reads 32
// consecutive words, one wavefront.
__device__ __forceinline__ int consumed_index() {
  return static_cast<int>(threadIdx.x) ^ 32;
}

// Adds the block's 1024 running sums (warp shuffles, then one warp over the 32 warp sums) and
// writes the row's result. Identical in every variant, so all variants round identically.
__device__ __forceinline__ void store_block_sum(float acc, float* out) {
  __shared__ float warp_sums[kThreads / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_down_sync(kFullMask, acc, offset);
  if (lane == 0) warp_sums[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    float v = warp_sums[lane];
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(kFullMask, v, offset);
    if (lane == 0) *out = v;
  }
}

// ---- sync-tiles ---------------------------------------------------------------------------------
// The textbook loop: every thread loads one float of the tile (a warp reads 128 contiguous
// bytes, 4 sectors: coalesced), stores it to shared memory, waits at a barrier, computes, and
// waits at a second barrier before the buffer is overwritten.
//
// Per tile and block: 4 KB requested at once, then nothing to do until it arrives. The store
// into shared memory needs the loaded value, so each warp stalls on the long scoreboard for a
// full DRAM round trip, L = ~1,000-1,600 clocks, and then computes for ~360 (~45 instructions
// per thread: 32 FFMA, the load, store, two barriers, the shared read, addressing). The SM's
// other block computes during part of that wait, but an SM finds only 2 x 360 clocks of work
// per L + 360: issue slots ~35-55% busy, and 65-80% of every warp's cycles spent waiting on
// its load. Expected finding: latency-bound (stall_long_scoreboard the dominant share of warp
// latency), with DRAM and the SM both far from their roofs.
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    async_copy_sync_tiles(const float* in, float* out, int cols) {
  __shared__ float tile[kTile];
  const float* row = in + static_cast<std::size_t>(blockIdx.x) * cols;
  const int t = threadIdx.x, mine = consumed_index();
  float acc = 0.0f;
  for (int first = 0; first < cols; first += kTile) {
    // PROBLEM: a synchronous copy: the warp waits on DRAM before it computes
    if (first + t < cols) tile[t] = row[first + t];
    __syncthreads();
    if (first + mine < cols) acc += evaluate(tile[mine]);
    __syncthreads();
  }
  store_block_sum(acc, out + blockIdx.x);
}

// ---- pipelined ----------------------------------------------------------------------------------
// cp.async through cuda::memcpy_async and a cuda::pipeline: 4 tile buffers, so while tile k is
// computed, tiles k+1, k+2 and k+3 are on their way. A copy goes from global memory straight
// into shared memory without passing through registers, so issuing it stalls nobody; a thread
// waits for a tile only three tiles (~3,000 clocks, ~1.5 us) after asking for it: longer than a
// DRAM round trip, so the wait normally finds the data there.
//
// Per tile and block: 256 threads each issue one 16-byte cp.async.cg (LDGSTS.128, bypassing
// L1), the other 768 issue none. Then per thread: cp.async.wait_group (the thread's own copies
// of tile k are done), __syncthreads (everyone's are, and everyone has finished reading the
// buffer that is refilled next), issue tile k+3, compute tile k. 32 FFMA + ~27 other
// instructions (~42 for the 256 copying threads), ~63 per warp on average: ~500 issue clocks
// per tile and block, ~1,000 per pair of tiles on an SM against L + 360 = ~1,400-2,000 for
// sync-tiles: expect 1.4-2x. Bytes in flight: 3 x 4 KB x 2 blocks = 24 KB per SM, twice what
// ~8 B/clock over ~1,400 clocks of latency needs.
//
// The pipeline is thread-scoped (cuda::make_pipeline(): commit_group / wait_group on each
// thread's own copies; producer_acquire and consumer_release are no-ops there) plus one
// __syncthreads per tile. The block-scoped form, cuda::pipeline_shared_state, synchronizes
// through shared-memory barriers instead of __syncthreads, but costs ~55 more instructions per
// thread and tile on sm_90 (two mbarrier waits, each reading the global timer for its backoff,
// three arrivals, stage bookkeeping): more than the 32 FMAs of a tile.
//
// Tails: tiles [0, wide) are full and start 16-byte aligned (wide = 0 when cols % 4 != 0 leaves
// the row misaligned): 256 threads copy 16 bytes each. The others, a partial last tile or every
// tile of a misaligned row, move 4 bytes per thread (cp.async of 4 bytes needs only 4-byte
// alignment). Threads past the end of the row copy nothing and the element's consumer skips it,
// so no zero fill is needed.
//
// Counters read differently here: cp.async traffic is not counted by the LSU global-load
// counters (l1tex__t_*_pipe_lsu_mem_global_op_ld), and the instrumented global-load byte counts
// find no LDG: this kernel has no gld_sectors_per_request or gld_overfetch, and its coalescing
// shows only in the copies' addresses (a warp's 32 pieces of 16 bytes are 512 contiguous
// bytes). The same holds for bulk-async.
// Expected finding: none of the catalogued problems; issue-bound, so probably compute-bound,
// perhaps with visible barrier stalls (the 8 copying warps run ~15 instructions longer).
__device__ __forceinline__ void fetch_tile(cuda::pipeline<cuda::thread_scope_thread>& pipe,
                                           float* buffer, const float* row, int k, int wide,
                                           int tiles, int cols) {
  const int t = threadIdx.x;
  if (k < wide) {
    if (t < kQuadsPerTile) {
      cuda::memcpy_async(buffer + 4 * t, row + k * kTile + 4 * t, cuda::aligned_size_t<16>(16),
                         pipe);
    }
  } else if (k < tiles && k * kTile + t < cols) {
    cuda::memcpy_async(buffer + t, row + k * kTile + t, cuda::aligned_size_t<4>(4), pipe);
  }
}

__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    async_copy_pipelined(const float* in, float* out, int cols) {
  __shared__ alignas(16) float stage[kStages][kTile];
  const float* row = in + static_cast<std::size_t>(blockIdx.x) * cols;
  const int tiles = (cols + kTile - 1) / kTile;
  const int wide = (reinterpret_cast<std::uintptr_t>(row) & 15) == 0 ? cols / kTile : 0;
  const int mine = consumed_index();
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();

  // One commit per tile slot, empty past the end of the row: group g holds tile g, so "all but
  // the newest kStages - 2 groups are complete" means "tile k is here".
  auto produce = [&](int k, float* buffer) {
    pipe.producer_acquire();
    fetch_tile(pipe, buffer, row, k, wide, tiles, cols);
    pipe.producer_commit();
  };
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) produce(s, stage[s]);

  float acc = 0.0f;
  for (int k0 = 0; k0 < tiles; k0 += kStages) {
    // Unrolled over the buffers, so that every buffer address is a constant offset.
#pragma unroll
    for (int s = 0; s < kStages; ++s) {
      const int k = k0 + s;
      if (k < tiles) {
        cuda::pipeline_consumer_wait_prior<kStages - 2>(pipe);  // my copies of tile k are done
        __syncthreads();  // everyone's are; everyone is done with tile k-1's buffer
        produce(k + kStages - 1, stage[(s + kStages - 1) % kStages]);
        if (k * kTile + mine < cols) acc += evaluate(stage[s][mine]);
        pipe.consumer_release();
      }
    }
  }
  store_block_sum(acc, out + blockIdx.x);
}

// ---- bulk-async ---------------------------------------------------------------------------------
// Hopper's bulk copy (TMA, cp.async.bulk): one thread asks for the whole 4 KB tile with a
// single instruction, and the copy engine reports completion by bytes on a shared-memory
// barrier (mbarrier complete_tx). cuda::memcpy_async with a block-scoped cuda::barrier in
// shared memory and cuda::aligned_size_t<16> lowers to exactly that on sm_90 (UBLKCP in SASS);
// no other thread spends an instruction on the copy, and no register or LSU slot is involved.
//
// Same 4 buffers as pipelined, one barrier per buffer (expected arrivals: all 1024 threads;
// transaction bytes: the tile). Per tile: wait for the buffer's barrier phase, compute,
// __syncthreads (everyone is done with the buffer), refill it with the tile 4 ahead and arrive.
// A thread's wait for phase n can only be released by phase n: the barrier cannot run a phase
// ahead, since each phase needs this thread's arrival, made after its previous wait.
// The copy costs one thread one instruction, but the barrier wait (cuda::barrier::wait_parity
// reads the global timer for its backoff) and arrival cost every thread more than a cp.async
// does: ~77 instructions per thread and tile, ~620 issue clocks per block: expect 1.1-1.6x
// over sync-tiles, a little behind pipelined.
//
// Tails: the bulk copy needs 16-byte aligned addresses and a size that is a multiple of 16; a
// partial last tile or a misaligned row uses 4-byte cp.async by each thread instead, as in
// pipelined, completed on the same barrier (cuda::memcpy_async issues cp.async.mbarrier.arrive
// for it).
// Expected finding: as pipelined.
__device__ __forceinline__ void fetch_tile_bulk(cuda::barrier<cuda::thread_scope_block>& ready,
                                                float* buffer, const float* row, int k, int wide,
                                                int cols) {
  const int t = threadIdx.x;
  if (k < wide) {
    if (t == 0) {
      cuda::memcpy_async(buffer, row + k * kTile, cuda::aligned_size_t<16>(kTile * sizeof(float)),
                         ready);
    }
  } else if (k * kTile + t < cols) {
    cuda::memcpy_async(buffer + t, row + k * kTile + t, cuda::aligned_size_t<4>(4), ready);
  }
  (void)ready.arrive();
}

__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    async_copy_bulk(const float* in, float* out, int cols) {
  using Barrier = cuda::barrier<cuda::thread_scope_block>;
  __shared__ alignas(128) float stage[kStages][kTile];
  // Barriers in shared memory are initialized by init() below, not by a constructor.
#pragma nv_diagnostic push
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ Barrier ready[kStages];
#pragma nv_diagnostic pop
  if (threadIdx.x == 0) {
#pragma unroll
    for (int s = 0; s < kStages; ++s) init(&ready[s], kThreads);
    // The bulk copies complete on these barriers from the async proxy: make the generic-proxy
    // initialization visible to it first.
    NV_IF_TARGET(NV_PROVIDES_SM_90, (cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);));
  }
  __syncthreads();

  const float* row = in + static_cast<std::size_t>(blockIdx.x) * cols;
  const int tiles = (cols + kTile - 1) / kTile;
  const int wide = (reinterpret_cast<std::uintptr_t>(row) & 15) == 0 ? cols / kTile : 0;
  const int mine = consumed_index();
#pragma unroll
  for (int s = 0; s < kStages; ++s)
    if (s < tiles) fetch_tile_bulk(ready[s], stage[s], row, s, wide, cols);

  float acc = 0.0f;
  for (int k0 = 0; k0 < tiles; k0 += kStages) {
    const bool parity = (k0 / kStages) % 2 != 0;  // phase k0 / kStages of every buffer
#pragma unroll
    for (int s = 0; s < kStages; ++s) {
      const int k = k0 + s;
      if (k < tiles) {
        ready[s].wait_parity(parity);
        if (k * kTile + mine < cols) acc += evaluate(stage[s][mine]);
        if (k + kStages < tiles) {
          __syncthreads();  // every thread is done reading buffer s
          fetch_tile_bulk(ready[s], stage[s], row, k + kStages, wide, cols);
        }
      }
    }
  }
  store_block_sum(acc, out + blockIdx.x);
}

// ---- the lab ------------------------------------------------------------------------------------

using KernelFn = void (*)(const float*, float*, int);

struct AsyncCopyVariant {
  VariantSpec spec;
  const char* kernel_name;
  KernelFn kernel;
  bool needs_sm90;  // cp.async.bulk
};
using Variants = VariantTable<AsyncCopyVariant>;

std::vector<AsyncCopyVariant> variant_table() {
  return {
      {{"sync-tiles", Role::baseline,
        "load a 4 KB tile, __syncthreads, compute, __syncthreads: every load's latency exposed",
        "latency-bound"},
       "async_copy_sync_tiles",
       async_copy_sync_tiles,
       false},
      {{"pipelined", Role::optimized,
        "cp.async via cuda::memcpy_async and cuda::pipeline, 4 buffers: 3 tiles in flight", ""},
       "async_copy_pipelined",
       async_copy_pipelined,
       false},
      {{"bulk-async", Role::optimized,
        "TMA bulk copy (cp.async.bulk) per tile, completed on an mbarrier, 4 buffers", ""},
       "async_copy_bulk",
       async_copy_bulk,
       true},
  };
}

// The CPU reference: each checked row's sum in double, and the bound the GPU's float result
// must meet. Per element, Horner's rule with one rounding per FMA errs by at most
// (K+1)·u·P(x), P(x) = sum_j |c_j|·|x|^j, u = 2^-24; the GPU's sum of n such values, by a
// sequential sum over a thread's tiles and then two 5-level shuffle trees, adds rounding on
// a path of depth d = tiles + 10: at most d·u·sum |p(x)|. The tolerance is that worst-case bound
// with a 25% margin, taken over the checked rows. For a default row (131072 elements, sums
// ~1.6e5) it is ~2.2, while the GPU's order of operations, emulated in float, errs by ~6e-3;
// a dropped, doubled or stale tile moves a sum by ~1,000. At small sizes the bound is below
// a single element's value (~1.2 on average): 0.027 at 5001 elements.
struct RowReference {
  double sum = 0;
  double bound = 0;
};

RowReference reference_row(const float* x, int cols) {
  constexpr int kChunk = 16;  // independent Horner chains, so the compiler can vectorize
  const int tiles = (cols + kTile - 1) / kTile;
  double sum = 0, abs_terms = 0, magnitudes = 0;
  for (int c0 = 0; c0 < cols; c0 += kChunk) {
    const int n = std::min(kChunk, cols - c0);
    double v[kChunk], a[kChunk], y[kChunk], m[kChunk];
    for (int i = 0; i < kChunk; ++i) {
      v[i] = i < n ? x[c0 + i] : 0.0;
      a[i] = std::fabs(v[i]);
      y[i] = coefficient(kDegree);
      m[i] = std::fabs(coefficient(kDegree));
    }
    for (int j = kDegree - 1; j >= 0; --j) {
      const double c = coefficient(j);
      for (int i = 0; i < kChunk; ++i) {
        y[i] = y[i] * v[i] + c;
        m[i] = m[i] * a[i] + std::fabs(c);
      }
    }
    for (int i = 0; i < n; ++i) {
      sum += y[i];
      abs_terms += std::fabs(y[i]);
      magnitudes += m[i];
    }
  }
  const double u = std::ldexp(1.0, -24);
  const double depth = tiles + 10;
  return {sum, 1.25 * u * ((kDegree + 1) * magnitudes + depth * abs_terms)};
}

// Rows whose result is checked: all of them while the reference stays under ~2^25 element
// evaluations (well under a second), else the first two, the middle, the last two and an even
// spread, up to that budget and at most 69 rows (69 at the default size).
std::vector<int> checked_rows(int rows, int cols) {
  const std::int64_t budget = std::int64_t{1} << 25;
  const int cap = static_cast<int>(std::clamp<std::int64_t>(budget / cols, 5, 69));
  std::vector<int> idx;
  if (rows <= cap) {
    for (int r = 0; r < rows; ++r) idx.push_back(r);
    return idx;
  }
  idx = {0, 1, rows / 2, rows - 2, rows - 1};
  const int spread = cap - 5;  // the midpoints of `spread` equal slices of the rows
  for (int s = 0; s < spread; ++s)
    idx.push_back(static_cast<int>(static_cast<std::int64_t>(rows) * (2 * s + 1) / (2 * spread)));
  std::sort(idx.begin(), idx.end());
  idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  return idx;
}

class AsyncCopyRun final : public LabRun {
 public:
  AsyncCopyRun(const Variants& variants, int rows, int cols, std::uint64_t seed)
      : variants_(variants), rows_(rows), cols_(cols) {
    const std::int64_t elements = static_cast<std::int64_t>(rows) * cols;
    if (elements > kMaxElements)
      throw UsageError(
          fmt::format("async-copy: rows x cols = {} elements; at most {} (2 GiB of floats)",
                      elements, kMaxElements));
    elements_ = static_cast<std::size_t>(elements);
    require_device_memory((elements_ + rows_) * sizeof(float), "async-copy at this size");
    host_in_.resize(elements_);
    fill_uniform(host_in_, seed);
    in_ = DeviceBuffer<float>(elements_);
    out_ = DeviceBuffer<float>(rows_);
    GPULAB_CUDA_CHECK(cudaMemcpy(in_.get(), host_in_.data(), in_.bytes(), cudaMemcpyHostToDevice));

    int device = 0, major = 0;
    GPULAB_CUDA_CHECK(cudaGetDevice(&device));
    GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    has_sm90_ = major >= 9;
  }

  // Every input read once, one float written per row; kDegree (32) FMAs per element, 2 flops
  // each (the row sums' additions, 1 flop per element, are left out).
  report::WorkModel work() const override {
    const double n = static_cast<double>(elements_);
    return {n * sizeof(float), static_cast<double>(rows_) * sizeof(float), 2.0 * kDegree * n};
  }

  std::optional<std::string> skip_reason(const std::string& variant) const override {
    if (variants_[variant].needs_sm90 && !has_sm90_)
      return std::string("bulk copies (cp.async.bulk, TMA) need compute capability 9.0");
    return std::nullopt;
  }

  std::vector<KernelLaunch> kernels(const std::string& variant) const override {
    const auto& v = variants_[variant];
    return {{v.kernel_name, reinterpret_cast<const void*>(v.kernel), grid(), block(), 0}};
  }

  void launch(const std::string& variant, cudaStream_t stream) override {
    const auto& v = variants_[variant];
    v.kernel<<<grid(), block(), 0, stream>>>(in_.get(), out_.get(), cols_);
    GPULAB_CUDA_CHECK_LAUNCH();
  }

  void poison_outputs(cudaStream_t stream) override { poison(out_.get(), out_.bytes(), stream); }

  report::Check check(const std::string& /*variant*/) override {
    if (rows_checked_.empty()) compute_reference();
    std::vector<float> all(rows_);
    GPULAB_CUDA_CHECK(cudaMemcpy(all.data(), out_.get(), out_.bytes(), cudaMemcpyDeviceToHost));
    std::vector<float> got;
    got.reserve(rows_checked_.size());
    for (int r : rows_checked_) got.push_back(all[r]);
    // The reference is rounded to float for compare(): tolerance_rel covers that rounding.
    auto result = compare(got.data(), reference_.data(), got.size(),
                          Tolerance{tolerance_abs_, std::ldexp(1.0, -24)});
    if (result.status == report::CheckStatus::failed) {
      for (std::size_t i = 0; i < got.size(); ++i) {
        const double err = std::fabs(static_cast<double>(got[i]) - reference_[i]);
        if (!(err <= tolerance_abs_ + std::ldexp(1.0, -24) * std::fabs(reference_[i]))) {
          result.message = fmt::format(
              "{} of {} checked rows differ; first: row {}, got {}, expected {} (tolerance {:.3g})",
              result.mismatches, got.size(), rows_checked_[i], got[i], reference_[i],
              tolerance_abs_);
          break;
        }
      }
    }
    return result;
  }

 private:
  const Variants& variants_;

  dim3 grid() const { return dim3(static_cast<unsigned>(rows_)); }
  static dim3 block() { return dim3(kThreads); }

  void compute_reference() {
    rows_checked_ = checked_rows(rows_, cols_);
    reference_.clear();
    tolerance_abs_ = 0;
    for (int r : rows_checked_) {
      const auto ref = reference_row(host_in_.data() + static_cast<std::size_t>(r) * cols_, cols_);
      reference_.push_back(static_cast<float>(ref.sum));
      tolerance_abs_ = std::max(tolerance_abs_, ref.bound);
    }
  }

  int rows_, cols_;
  std::size_t elements_ = 0;
  bool has_sm90_ = false;
  std::vector<float> host_in_;
  DeviceBuffer<float> in_, out_;
  // Filled on the first check.
  std::vector<int> rows_checked_;
  std::vector<float> reference_;
  double tolerance_abs_ = 0;
};

std::unique_ptr<LabRun> setup_run(const Variants& variants, const ParamValues& params,
                                  std::uint64_t seed) {
  return std::make_unique<AsyncCopyRun>(variants, static_cast<int>(params.at("rows")),
                                        static_cast<int>(params.at("cols")), seed);
}

std::unique_ptr<Lab> make_lab() {
  LabSpec spec;
  spec.name = "async-copy";
  spec.topic = "latency hiding: asynchronous copies to shared memory, multi-stage pipelines";
  spec.summary =
      "stream 4 KB tiles through shared memory: synchronous loads vs cp.async and TMA pipelines";
  spec.teaching_point =
      "A tile loop that loads, waits at a barrier and then computes pays a full memory round "
      "trip for every tile, and more warps do not help when the barrier keeps them all waiting "
      "together. Asynchronous copies (cp.async, or one TMA bulk copy per tile on Hopper) write "
      "straight into shared memory without holding a register or a warp, so a pipeline of a "
      "few buffers can ask for tile k+3 while computing tile k. The arithmetic then hides the "
      "latency instead of waiting behind it, and the kernel runs at the speed of its "
      "instructions.";
  spec.params = {
      {"rows", "rows of the matrix: one block and one output each", 3072, 1, 65536, false},
      {"cols", "floats per row: tiles of 1024 walked by each block", 131072, 1, 1 << 24, true},
  };
  return make_table_lab(std::move(spec), variant_table(), setup_run);
}

}  // namespace
}  // namespace gpulab::labs

GPULAB_REGISTER_LAB(gpulab::labs::make_lab)
