// Lab `matmul`: C = A·B in fp32, row-major; A is M x K, B K x N, M = N = `size`, K = `k`.
//
// A matrix multiply does 2·M·N·K flops on 4·(M·K + K·N + M·N) bytes: at 4096 that is 137 GFLOP
// on 201 MB, about 680 flops per byte, far right of the H200's ridge point (~67 TFLOP/s of
// fp32 FMA over ~4.8 TB/s is ~14 flops per byte). So the speed of a matmul kernel is decided by
// how often it goes back to memory for an operand it has already seen: every variant below
// does the same multiply-adds, and each one keeps operands closer to the FMA units for longer.
//
// Roofs used in the napkin math (H200, 132 SMs at ~1.98 GHz boost): each SM retires 128 fp32
// FMAs per clock (4 warp-wide FFMA instructions), ~67 TFLOP/s for the chip; shared memory
// delivers one 128-byte wavefront per clock per SM; L2 serves several TB/s; HBM ~4.8 TB/s.
// What cuBLAS reaches in strict fp32 at 4096³, the default size, is in docs/cards.md (from
// tests/fixtures/labs/matmul.json, recorded on the H200).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <cublas_v2.h>
#include <fmt/format.h>

#include "labs/harness/check.hpp"
#include "labs/harness/cuda_check.hpp"
#include "labs/harness/device_buffer.hpp"
#include "labs/harness/harness.hpp"
#include "labs/harness/random.hpp"
#include "labs/harness/registry.hpp"
#include "labs/harness/table_lab.hpp"

// cuBLAS status checks, in the shape of GPULAB_CUDA_CHECK (reports/base/errors.hpp).
#define GPULAB_CUBLAS_CHECK(call) \
  GPULAB_API_CHECK("cuBLAS", call, CUBLAS_STATUS_SUCCESS, ::cublasGetStatusString)
#define GPULAB_CUBLAS_CHECK_NOEXCEPT(call) \
  GPULAB_API_CHECK_NOEXCEPT("cuBLAS", call, CUBLAS_STATUS_SUCCESS, ::cublasGetStatusString)

namespace gpulab::labs {
namespace {

// ---- naive ----------------------------------------------------------------------------------
// One thread per element of C, a 32 x 8 block: lane = column, so a warp covers 32 adjacent
// columns of one row. Per k, a warp loads A[row][k] (one address, broadcast: 1 sector) and
// B[k][col..col+31] (128 B, 4 sectors), then does 32 FMAs: two load instructions per FMA
// instruction, 8 bytes requested per FMA, reuse factor 1 at the instruction level.
//
// The bytes mostly come from caches, not DRAM: the block's 8 warps read the same B sectors
// (L1 hits for 7 of 8), and a 32-byte A sector serves 8 consecutive k. What leaves the SM is
// (8 rows of A + 32 columns of B) · K · 4 B per block = 0.625 B per FMA: ~43 GB from L2 at 4096.
// DRAM sees more than the model too: 8 resident blocks per SM hold only ~66 rows of C, so
// B (64 MB, more than L2 keeps) streams from DRAM about once per wave of blocks, ~60 waves:
// a few GB in all, yet over tens of milliseconds that is only ~2-5% of HBM bandwidth.
//
// Expected finding: latency-bound, not redundant-dram-traffic. DRAM bytes are many times the
// model, but at a few % of HBM bandwidth they do not set the time (and smem-tiled, faster, moves
// about as many). No unit is near its roof: FMA pipes ~5-10% busy; L1, which caps this kernel at
// 1/8 of the FMA roof (two requests per warp-FFMA at ~one request per clock), about half. Each
// warp issues its loads, waits an L1/L2 round trip (hundreds of cycles on an L1 miss) on a long
// scoreboard, then does one FFMA per load pair. The fix is not faster memory but fewer trips.
__global__ void matmul_naive(const float* __restrict__ a, const float* __restrict__ b,
                             float* __restrict__ c, int m, int n, int k) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= m || col >= n) return;
  const float* a_row = a + static_cast<size_t>(row) * k;
  float acc = 0.0f;
  // PROBLEM: every operand from global memory: A and B re-read for each output
  for (int i = 0; i < k; ++i) acc = fmaf(a_row[i], b[static_cast<size_t>(i) * n + col], acc);
  c[static_cast<size_t>(row) * n + col] = acc;
}

constexpr int kNaiveBlockX = 32;  // columns: one warp = 32 adjacent columns, coalesced B and C
constexpr int kNaiveBlockY = 8;   // rows: 256 threads, 8 blocks per SM

// ---- shared-memory tiles ----------------------------------------------------------------------
// A 16 x 16 block computes a 16 x 16 tile of C. For each 16-wide slice of K it copies a 16 x 16
// tile of A and one of B into shared memory (one float per thread each, coalesced: a warp reads
// two 64-byte row pieces per matrix), waits, and accumulates 16 FMAs from shared memory.
//
// Each global value now serves 16 FMAs instead of 1: 2 loads per 16 FMAs, 16x fewer global load
// instructions and ~10x fewer L1 sectors than naive. Bytes leaving the SM: 2 KB per
// 16 x 16 x 16 = 4096 FMAs = 0.5 B/FMA, only a little below naive's 0.625, because naive's L1
// already merged most of its re-reads; what tiling removes is the load instructions and the
// round trips behind them. DRAM traffic stays as naive's: 8 blocks of 256 threads per SM keep
// the same ~66 rows of C resident, so B streams from DRAM about as often.
//
// The limit moves to shared memory: per FMA, one load of As[ty][k] (the compiler fetches 4 k at
// once with a 128-bit load, a broadcast: two rows per warp) and one of Bs[k][tx] (16 words, no
// conflict). ~1.25 shared wavefronts per warp-FFMA against one wavefront per clock per SM and
// four FFMA per clock: the FMA pipes can be at most ~20% busy, and a __syncthreads every 16 FMAs
// adds barrier stalls. Expected finding: none of the catalogued ones (shared-pipe bound, no
// bank conflicts, DRAM far from its roof); expect roughly 1.3-2x naive.
constexpr int kSmemTile = 16;

__global__ void matmul_smem_tiled(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ c, int m, int n, int k) {
  __shared__ __align__(16) float as[kSmemTile][kSmemTile];
  __shared__ __align__(16) float bs[kSmemTile][kSmemTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kSmemTile + ty;
  const int col = blockIdx.x * kSmemTile + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < k; k0 += kSmemTile) {
    // Out-of-range elements load as 0, so they add nothing; every thread stays for the barriers.
    as[ty][tx] = (row < m && k0 + tx < k) ? a[static_cast<size_t>(row) * k + k0 + tx] : 0.0f;
    bs[ty][tx] = (k0 + ty < k && col < n) ? b[static_cast<size_t>(k0 + ty) * n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kSmemTile; ++i) acc = fmaf(as[ty][i], bs[i][tx], acc);
    __syncthreads();
  }
  if (row < m && col < n) c[static_cast<size_t>(row) * n + col] = acc;
}

// ---- register tiles -----------------------------------------------------------------------------
// The showcase. A block of 256 threads computes a 128 x 128 tile of C, walking K in slices of 8;
// each thread owns an 8 x 8 block of C in 64 registers.
//
// Reuse, level by level:
//  - global -> shared: per K slice the block loads A 128x8 and B 8x128 = 8 KB for
//    128·128·8 = 131,072 FMAs: 0.0625 B/FMA (naive 0.625 after L1, smem-tiled 0.5), i.e.
//    32 flops per byte fetched from L2. At 30 TFLOP/s that is ~0.9 TB/s of L2 reads, well
//    inside L2's bandwidth. Each thread loads one float4 of A and one of B per slice: one
//    128-bit global load per 256 FMAs of its own.
//  - shared -> registers: per k, a thread reads 8 values of A (its rows) and 8 of B (its
//    columns), four 128-bit shared loads, and does 8 x 8 = 64 FMAs (an outer product):
//    each value read from shared memory feeds 8 FMAs. Per warp and k: 4 wavefronts for 64 FFMA
//    instructions, i.e. 1 wavefront per 16 FFMA; the SM's shared pipe (1 wavefront/clock) is
//    ~25% busy when the FMA pipes (4 FFMA/clock) are full.
//  - DRAM: 2 resident blocks per SM x 132 SMs hold 264 tiles = ~1056 rows of C at 4096, so B is
//    streamed ~4 times per launch: ~0.3 GB, against several GB for naive and smem-tiled.
//
// Layout choices:
//  - A is stored transposed in shared memory, as[k][m], so a thread's 8 A values for one k are
//    contiguous and come in two 128-bit loads, like B's. The transposing store (4 scalar stores
//    per thread and slice) would put the two threads that share a row of A in one bank; padding
//    each as row to 128 + 4 floats shifts the k+4 rows by 16 banks: conflict-free stores, and
//    rows stay 16-byte aligned (132 x 4 = 528 B) for the 128-bit reads.
//  - A thread's 8 rows are two groups of 4, 64 apart (ty*4 and 64 + ty*4), and so are its
//    columns. A warp is 4 (ty) x 8 (tx) threads: its A reads for one k span 4 x 4 = 16
//    consecutive words (8 lanes share each float4: broadcast) and its B reads 8 x 4 = 32
//    consecutive words, one wavefront each, no conflict. Stores of C by float4 put each warp
//    store on 4 rows x 128 contiguous bytes: 16 sectors, all fully used.
//  - Double buffering: two copies of each shared tile. While the FMAs of slice t run from one
//    buffer, the global loads of slice t+1 are already in flight into registers and are stored
//    into the other buffer afterwards; one __syncthreads per slice instead of two, and the load
//    latency hides behind 512 FMAs per thread.
//
// Resources: 64 accumulators + 16 fragment values + 8 prefetch registers + addressing.
// __launch_bounds__(256, 2) caps registers at 128 (256 threads x 128 x 2 blocks = the SM's 64K),
// which this kernel fits without spilling (ptxas's figures: the build's ptxas table, shown in
// the report's kernel attributes). Shared memory:
// 2 x (8 x 132 + 8 x 128) x 4 B = 16,640 B per block. Occupancy 16 warps per SM (25%) is
// enough: each warp has 64 independent FMAs per k, and its next loads in flight.
//
// Edges: sizes that are not multiples of 128 (or 8) zero-fill the out-of-range parts of a tile
// and skip the out-of-range stores. The float4 global path needs 16-byte aligned rows: K % 4 == 0
// for A and N % 4 == 0 for B and C (cudaMalloc bases are 256-byte aligned). Then a float4 that
// starts in range is wholly in range, and one guard per float4 suffices. Other sizes use the
// kScalar instance, which loads and stores element by element, each guarded.
//
// Expected finding: compute-bound (FMA pipes busy; memory units far from their roofs).
namespace rt {
constexpr int kBM = 128;           // block tile rows (of A and C)
constexpr int kBN = 128;           // block tile columns (of B and C)
constexpr int kBK = 8;             // K slice per shared tile
constexpr int kThreads = 256;      // 16 x 16 threads, 8 x 8 outputs each
constexpr int kAStride = kBM + 4;  // padded row of the transposed A tile (see above)
constexpr int kHalf = 64;          // a thread's second group of rows / columns starts here
}  // namespace rt

enum class Access { kVector, kScalar };

// M[row][col..col+3] of a rows x cols row-major matrix (A is m x k, B is k x n); zeros outside
// the matrix.
template <Access kAccess>
__device__ __forceinline__ float4 load_quad(const float* __restrict__ matrix, int rows, int cols,
                                            int row, int col) {
  if constexpr (kAccess == Access::kVector) {
    if (row < rows && col < cols)
      return *reinterpret_cast<const float4*>(matrix + static_cast<size_t>(row) * cols + col);
    return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  } else {
    const bool in_row = row < rows;
    const float* p = matrix + static_cast<size_t>(in_row ? row : 0) * cols;
    return make_float4(
        in_row && col + 0 < cols ? p[col + 0] : 0.0f, in_row && col + 1 < cols ? p[col + 1] : 0.0f,
        in_row && col + 2 < cols ? p[col + 2] : 0.0f, in_row && col + 3 < cols ? p[col + 3] : 0.0f);
  }
}

template <Access kAccess>
__device__ __forceinline__ void store_c_quad(float* __restrict__ c, int m, int n, int row, int col,
                                             float4 v) {
  if (row >= m) return;
  float* p = c + static_cast<size_t>(row) * n;
  if constexpr (kAccess == Access::kVector) {
    if (col < n) *reinterpret_cast<float4*>(p + col) = v;
  } else {
    if (col + 0 < n) p[col + 0] = v.x;
    if (col + 1 < n) p[col + 1] = v.y;
    if (col + 2 < n) p[col + 2] = v.z;
    if (col + 3 < n) p[col + 3] = v.w;
  }
}

template <Access kAccess>
__global__ void __launch_bounds__(rt::kThreads, 2)
    matmul_register_tiled(const float* __restrict__ a, const float* __restrict__ b,
                          float* __restrict__ c, int m, int n, int k) {
  using namespace rt;
  __shared__ __align__(16) float as[2][kBK][kAStride];  // A tile, transposed: as[buf][k][m]
  __shared__ __align__(16) float bs[2][kBK][kBN];       // B tile: bs[buf][k][n]

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  // The thread's 4 x 4 cell in each quadrant of the block tile; a warp is 4 cells tall, 8 wide.
  const int ty = (warp / 2) * 4 + lane / 8;  // 0..15
  const int tx = (warp % 2) * 8 + lane % 8;  // 0..15

  const int block_row = blockIdx.y * kBM;
  const int block_col = blockIdx.x * kBN;

  // Global -> shared: the A tile (128 x 8) is 256 float4, 2 per row; the B tile (8 x 128) is
  // 256 float4, 32 per row. One of each per thread.
  const int a_row = tid / 2, a_col = (tid % 2) * 4;
  const int b_row = tid / 32, b_col = (tid % 32) * 4;

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  const int slices = (k + kBK - 1) / kBK;

  float4 next_a = load_quad<kAccess>(a, m, k, block_row + a_row, a_col);
  float4 next_b = load_quad<kAccess>(b, k, n, b_row, block_col + b_col);
  as[0][a_col + 0][a_row] = next_a.x;
  as[0][a_col + 1][a_row] = next_a.y;
  as[0][a_col + 2][a_row] = next_a.z;
  as[0][a_col + 3][a_row] = next_a.w;
  *reinterpret_cast<float4*>(&bs[0][b_row][b_col]) = next_b;
  __syncthreads();

  for (int t = 0; t < slices; ++t) {
    const int cur = t & 1;
    const bool more = t + 1 < slices;
    if (more) {  // slice t+1: issue the global loads now, use them after the FMAs below
      const int k0 = (t + 1) * kBK;
      next_a = load_quad<kAccess>(a, m, k, block_row + a_row, k0 + a_col);
      next_b = load_quad<kAccess>(b, k, n, k0 + b_row, block_col + b_col);
    }

#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      const float4 a_lo = *reinterpret_cast<const float4*>(&as[cur][kk][ty * 4]);
      const float4 a_hi = *reinterpret_cast<const float4*>(&as[cur][kk][kHalf + ty * 4]);
      const float4 b_lo = *reinterpret_cast<const float4*>(&bs[cur][kk][tx * 4]);
      const float4 b_hi = *reinterpret_cast<const float4*>(&bs[cur][kk][kHalf + tx * 4]);
      const float af[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
      const float bf[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(af[i], bf[j], acc[i][j]);
    }

    if (more) {  // the other buffer was last read before the previous barrier: free to fill
      const int nxt = cur ^ 1;
      as[nxt][a_col + 0][a_row] = next_a.x;
      as[nxt][a_col + 1][a_row] = next_a.y;
      as[nxt][a_col + 2][a_row] = next_a.z;
      as[nxt][a_col + 3][a_row] = next_a.w;
      *reinterpret_cast<float4*>(&bs[nxt][b_row][b_col]) = next_b;
    }
    __syncthreads();
  }

  // acc[i][j]: row (i < 4 ? ty*4 + i : 64 + ty*4 + i-4), column likewise with tx and j.
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = block_row + (i < 4 ? 0 : kHalf) + ty * 4 + (i % 4);
    store_c_quad<kAccess>(c, m, n, row, block_col + tx * 4,
                          make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
    store_c_quad<kAccess>(c, m, n, row, block_col + kHalf + tx * 4,
                          make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]));
  }
}

// ---- warp tiles ---------------------------------------------------------------------------------
// register-tiled stays short of cuBLAS (docs/cards.md), its schedulers issuing on fewer of their
// cycles than cuBLAS's (tests/fixtures/labs/matmul.json holds the counters). The fixture and the
// SASS say where the cycles go:
//  - Its prefetch is not one: held to 128 registers, ptxas places the two LDG.128 of slice t+1
//    after slice t's 512 FFMAs, just before the shared stores that consume them, so every slice
//    waits out an L2 round trip (long-scoreboard stalls: 0.77 per issued instruction).
//  - Its shared loads take 3.0 wavefronts per LDS.128: an LDS.128 returns 4 registers per lane
//    at 128 bytes per wavefront, 4 wavefronts, or 2 when lanes n and n^1 (or n and n^2) read
//    the same address and the hardware packs the broadcast. Its A reads pair lanes that way (2),
//    its B reads do not (4).
//
// This kernel keeps the block tile (128 x 128 x 8, 256 threads, 8 x 8 outputs per thread in 64
// registers, A transposed in shared memory) and changes three things.
//  1. Asynchronous copies (cp.async) move each slice from global to shared memory without
//     passing through registers, 3 stages deep, as cuBLAS's kernel here does
//     (sm80_xmma_gemm_..._tilesize256x128x8_stage3): while slice t is multiplied, slices t+1 and
//     t+2 are in flight. There is nothing for ptxas to sink, no prefetch registers and no shared
//     stores to issue. A arrives transposed through 4-byte copies (4 per thread and slice; a
//     warp reads 4 rows x 32 B, 4 sectors), B through one 16-byte copy per thread. The slice a
//     thread waits for was issued two slices earlier: 2 x ~590 instructions x 4 warps per
//     scheduler, ~5,000 cycles (~2.5 us), several L2 round trips.
//  2. Warp tiles: warp w owns the 64 x 32 piece of the block tile at rows (w/4)·64, columns
//     (w%4)·32; its 32 lanes are 8 x 4 threads of 8 x 8 outputs each: rows in two groups of 4,
//     32 apart, columns in two groups of 4, 16 apart.
//  3. The lane layout inside the warp tile: lane bits 1, 3, 4 pick the thread's rows, bits 0 and
//     2 its columns. Lanes n and n^1 then share rows (the same A addresses), lanes n and n^2
//     columns (the same B addresses): every fragment load takes 2 wavefronts, and none
//     conflicts (A: 8 float4, 32 consecutive words; B: 4 float4, 16 consecutive words).
//
// Napkin math. Per warp and k: 64 FFMA instructions for 4 LDS.128 of 2 wavefronts each (8,
// register-tiled 12): each 4-byte value read from shared memory feeds 8 FMAs (16 flops), and with
// the FMA pipes full (4 FFMA per clock per SM) the shared pipe is 50% busy (register-tiled: 75%).
// Per warp and slice: 512 FFMA, 32 LDS.128, 5 cp.async, a wait, a barrier and address arithmetic,
// 592 SASS instructions in all (register-tiled: 603): 86% are FFMAs, against cuBLAS's 88%. Per
// block and slice: 8 KB from L2 for 131,072 FMAs, as in register-tiled (0.0625 B/FMA; ~1.4 TB/s
// of L2 reads at 45 TFLOP/s). Registers: 64 accumulators, the fragments of this k and the next
// (the next k's loads overlap this k's FMAs), the copy state and addressing, within the 128 that
// __launch_bounds__(256, 2) allows and without spills (the build's ptxas table). Shared memory:
// 3 x (8 x 132 + 8 x 128) x 4 B = 24,960 B per block. Occupancy: 2 blocks per SM, 16 warps, 4 per
// scheduler, each with 64 independent FMAs per k. The aim, 85% of cuBLAS, is ~44 TFLOP/s, 65% of
// the FMA roof: at 86% FFMAs, issuing on ~75% of cycles.
//
// Edges as in register-tiled: out-of-range elements arrive as zeros (a cp.async with 0 source
// bytes reads nothing and zero-fills its destination) and out-of-range stores are skipped. The
// 16-byte copies of B and the float4 stores of C need 16-byte aligned rows, N % 4 == 0; other
// sizes use the kScalar instance (4-byte copies of B, scalar stores). A's copies are 4 bytes
// either way, so K needs no alignment.
//
// Expected finding: compute-bound.
namespace wt {
constexpr int kBM = 128;           // block tile rows (of A and C)
constexpr int kBN = 128;           // block tile columns (of B and C)
constexpr int kBK = 8;             // K slice per stage
constexpr int kThreads = 256;      // 8 warps of 64 x 32, 8 x 8 outputs per thread
constexpr int kStages = 3;         // shared buffers: slices t, t+1, t+2
constexpr int kAStride = kBM + 4;  // padded row of the transposed A tile (as in register-tiled)
constexpr int kWarpM = 64;         // warp tile rows
constexpr int kWarpN = 32;         // warp tile columns
constexpr int kHalfM = 32;         // a thread's second group of rows starts here in the warp tile
constexpr int kHalfN = 16;         // and its second group of columns
}  // namespace wt

// cp.async of 4 or 16 bytes from global memory to the shared-memory address `dst`; when `valid`
// is false it reads no source byte (source size 0) and writes zeros, so `src` may then point
// outside the matrix.
__device__ __forceinline__ void cp_async_4(unsigned dst, const float* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst),
               "l"(__cvta_generic_to_global(src)), "r"(valid ? 4 : 0)
               : "memory");
}

__device__ __forceinline__ void cp_async_16(unsigned dst, const float* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(__cvta_generic_to_global(src)), "r"(valid ? 16 : 0)
               : "memory");
}

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Closes the group of this thread's copies issued since the last commit.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most kPending of this thread's most recent groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// A thread's share of the copies of each K slice, and where the next slice starts.
//  - A, 128 x 8: thread t copies k = t % 8 of rows t/8 + 32j, j < 4. A warp reads 8 consecutive k
//    of 4 rows (4 sectors) and writes as[k][row] at bank (4k + row) % 32: 32 banks, no conflict.
//  - B, 8 x 128: one float4 per thread (a warp copies one 512-byte row), or 4 floats of rows
//    t/128 + 2j.
// The sources advance by one slice per fetch; a copy whose element is outside the matrix has
// source size 0, so its address is never read.
template <Access kAccess>
struct SliceCopier {
  const float* a_src;  // A[block_row + ar][k0 + ak]
  const float* b_src;  // B[k0 + bk][block_col + bc]
  int k0;              // first k of the next slice
  int ak, bk;          // the k of the thread's copies within the slice (B: the first of 4)
  unsigned a_dst;      // shared address of as[0][ak][ar]
  unsigned b_dst;      // and of bs[0][bk][bc]
  bool a_row_in[4];    // block_row + ar + 32j < m
  bool b_col_in;       // block_col + bc < n (with float4, n % 4 == 0 makes all 4 in range)

  __device__ __forceinline__ SliceCopier(const float* a, const float* b, int m, int n, int k,
                                         int block_row, int block_col,
                                         float (*as)[wt::kBK][wt::kAStride],
                                         float (*bs)[wt::kBK][wt::kBN]) {
    using namespace wt;
    ak = threadIdx.x % kBK;
    const int ar = threadIdx.x / kBK;
    int bc;
    if constexpr (kAccess == Access::kVector) {
      bk = threadIdx.x / 32;
      bc = threadIdx.x % 32 * 4;
    } else {
      bk = threadIdx.x / kBN;
      bc = threadIdx.x % kBN;
    }
    a_src = a + static_cast<size_t>(block_row + ar) * k + ak;
    b_src = b + static_cast<size_t>(bk) * n + block_col + bc;
    k0 = 0;
    a_dst = shared_address(&as[0][ak][ar]);
    b_dst = shared_address(&bs[0][bk][bc]);
#pragma unroll
    for (int j = 0; j < 4; ++j) a_row_in[j] = block_row + ar + 32 * j < m;
    b_col_in = block_col + bc < n;
  }

  // Issues the copies of the next slice into stage `stage` (as[k][m], A transposed; bs[k][n]).
  __device__ __forceinline__ void fetch(int n, int k, int stage) {
    using namespace wt;
    constexpr unsigned kAStage = kBK * kAStride * sizeof(float);
    constexpr unsigned kBStage = kBK * kBN * sizeof(float);
    const unsigned a_to = a_dst + stage * kAStage, b_to = b_dst + stage * kBStage;
    const bool a_k_in = k0 + ak < k;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      cp_async_4(a_to + 32 * j * sizeof(float), a_src + static_cast<size_t>(32 * j) * k,
                 a_k_in && a_row_in[j]);
    if constexpr (kAccess == Access::kVector) {
      cp_async_16(b_to, b_src, b_col_in && k0 + bk < k);
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j)
        cp_async_4(b_to + 2 * j * kBN * sizeof(float), b_src + static_cast<size_t>(2 * j) * n,
                   b_col_in && k0 + bk + 2 * j < k);
    }
    a_src += kBK;
    b_src += static_cast<size_t>(kBK) * n;
    k0 += kBK;
  }
};

template <Access kAccess>
__global__ void __launch_bounds__(wt::kThreads, 2)
    matmul_warp_tiled(const float* __restrict__ a, const float* __restrict__ b,
                      float* __restrict__ c, int m, int n, int k) {
  using namespace wt;
  __shared__ __align__(16) float as[kStages][kBK][kAStride];  // A tiles, transposed: [k][m]
  __shared__ __align__(16) float bs[kStages][kBK][kBN];       // B tiles: [k][n]

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int lane_m = ((lane >> 1) & 1) | ((lane >> 2) & 6);  // lane bits 1, 3, 4: 0..7
  const int lane_n = (lane & 1) | ((lane >> 1) & 2);         // lane bits 0, 2: 0..3
  // The thread's rows: row_lo + 0..3 and row_lo + 32 + 0..3; columns col_lo + 0..3 and
  // col_lo + 16 + 0..3 (in the block tile).
  const int row_lo = warp / 4 * kWarpM + lane_m * 4;
  const int col_lo = warp % 4 * kWarpN + lane_n * 4;

  const int block_row = blockIdx.y * kBM;
  const int block_col = blockIdx.x * kBN;

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  const int slices = (k + kBK - 1) / kBK;
  SliceCopier<kAccess> copier(a, b, m, n, k, block_row, block_col, as, bs);

  // Slices 0 .. kStages-2 in flight before the first FMA. One group per slice, empty past the
  // last one, so that the wait below counts slices.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < slices) copier.fetch(n, k, s);
    cp_async_commit();
  }

  int cur = 0;             // stage holding slice t
  int fill = kStages - 1;  // stage slice t + kStages-1 goes to: the one slice t-1 used
  for (int t = 0; t < slices; ++t) {
    cp_async_wait<kStages - 2>();  // this thread's copies of slice t have landed
    __syncthreads();               // everyone's have, and everyone is done reading slice t-1
    if (t + kStages - 1 < slices) copier.fetch(n, k, fill);
    cp_async_commit();

#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      const float4 a_lo = *reinterpret_cast<const float4*>(&as[cur][kk][row_lo]);
      const float4 a_hi = *reinterpret_cast<const float4*>(&as[cur][kk][row_lo + kHalfM]);
      const float4 b_lo = *reinterpret_cast<const float4*>(&bs[cur][kk][col_lo]);
      const float4 b_hi = *reinterpret_cast<const float4*>(&bs[cur][kk][col_lo + kHalfN]);
      const float af[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
      const float bf[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(af[i], bf[j], acc[i][j]);
    }

    cur = cur + 1 == kStages ? 0 : cur + 1;
    fill = fill + 1 == kStages ? 0 : fill + 1;
  }

  // acc[i][j]: row row_lo + (i < 4 ? i : 32 + i-4), column likewise with col_lo, j and 16. A
  // warp's store covers 8 rows x 64 contiguous bytes: 16 sectors, all used.
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = block_row + row_lo + (i < 4 ? i : kHalfM + i - 4);
    store_c_quad<kAccess>(c, m, n, row, block_col + col_lo,
                          make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
    store_c_quad<kAccess>(c, m, n, row, block_col + col_lo + kHalfN,
                          make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]));
  }
}

// ---- cuBLAS -------------------------------------------------------------------------------------
// The reference: cublasSgemm in CUBLAS_DEFAULT_MATH, set explicitly on the handle. In that mode
// single-precision routines keep fp32 inputs and fp32 accumulation: TF32 tensor cores are used
// only with CUBLAS_TF32_TENSOR_OP_MATH (or a *_FAST_TF32 compute type), and BF16x9 emulation
// only with CUBLAS_FP32_EMULATED_BF16X9_MATH; we set neither. (The check below would also catch
// TF32 at the default size: its 2^-11 input rounding gives errors ~200x those of fp32.) Expected
// finding: compute-bound, at most of the fp32 FMA roof (docs/cards.md).
//
// cuBLAS is column-major. A row-major M x N matrix is, in memory, the column-major N x M matrix
// of its transpose, so row-major C = A·B is column-major C^T = B^T·A^T: call Sgemm with the
// operands swapped, no transposition flags, m = N, n = M, and leading dimensions N (B, C), K (A).
class CublasHandle {
 public:
  CublasHandle() = default;
  static CublasHandle create() {
    CublasHandle h;
    GPULAB_CUBLAS_CHECK(cublasCreate(&h.handle_));
    GPULAB_CUBLAS_CHECK(cublasSetMathMode(h.handle_, CUBLAS_DEFAULT_MATH));
    return h;
  }
  ~CublasHandle() { release(); }
  CublasHandle(CublasHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  CublasHandle& operator=(CublasHandle&& other) noexcept {
    if (this != &other) {
      release();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;

  cublasHandle_t get() const { return handle_; }

 private:
  void release() noexcept {
    if (handle_) GPULAB_CUBLAS_CHECK_NOEXCEPT(cublasDestroy(handle_));
    handle_ = nullptr;
  }
  cublasHandle_t handle_ = nullptr;
};

// ---- the lab ----------------------------------------------------------------------------------

using KernelFn = void (*)(const float*, const float*, float*, int, int, int);

struct Shape {
  int m, n, k;
};

// What a variant launches for a shape. fn == nullptr: the variant calls cuBLAS, whose kernel
// gpulab cannot name or query.
struct KernelPlan {
  const char* name;
  KernelFn fn;
  dim3 grid;
  dim3 block;
};

int blocks_for(int extent, int tile) { return (extent + tile - 1) / tile; }

KernelPlan plan_naive(const Shape& s) {
  return {"matmul_naive", matmul_naive,
          dim3(blocks_for(s.n, kNaiveBlockX), blocks_for(s.m, kNaiveBlockY)),
          dim3(kNaiveBlockX, kNaiveBlockY)};
}

KernelPlan plan_smem_tiled(const Shape& s) {
  return {"matmul_smem_tiled", matmul_smem_tiled,
          dim3(blocks_for(s.n, kSmemTile), blocks_for(s.m, kSmemTile)),
          dim3(kSmemTile, kSmemTile)};
}

KernelPlan plan_register_tiled(const Shape& s) {
  const dim3 grid(blocks_for(s.n, rt::kBN), blocks_for(s.m, rt::kBM));
  if (s.k % 4 == 0 && s.n % 4 == 0)
    return {"matmul_register_tiled", matmul_register_tiled<Access::kVector>, grid,
            dim3(rt::kThreads)};
  return {"matmul_register_tiled_scalar", matmul_register_tiled<Access::kScalar>, grid,
          dim3(rt::kThreads)};
}

KernelPlan plan_warp_tiled(const Shape& s) {
  const dim3 grid(blocks_for(s.n, wt::kBN), blocks_for(s.m, wt::kBM));
  if (s.n % 4 == 0)
    return {"matmul_warp_tiled", matmul_warp_tiled<Access::kVector>, grid, dim3(wt::kThreads)};
  return {"matmul_warp_tiled_scalar", matmul_warp_tiled<Access::kScalar>, grid, dim3(wt::kThreads)};
}

KernelPlan plan_cublas(const Shape&) { return {"cublas_sgemm", nullptr, dim3(), dim3()}; }

struct MatmulVariant {
  VariantSpec spec;
  KernelPlan (*plan)(const Shape&);
};
using Variants = VariantTable<MatmulVariant>;

std::vector<MatmulVariant> variant_table() {
  return {
      {{"naive", Role::baseline,
        "one thread per element of C; A row and B column read from global memory for every k",
        "latency-bound"},
       plan_naive},
      {{"smem-tiled", Role::optimized,
        "16x16 tiles of A and B staged in shared memory; one element of C per thread", ""},
       plan_smem_tiled},
      {{"register-tiled", Role::optimized,
        "128x128x8 double-buffered shared tiles, 8x8 outputs per thread in registers, float4 loads",
        "compute-bound"},
       plan_register_tiled},
      {{"warp-tiled", Role::optimized,
        "128x128x8 tiles in 64x32 warp tiles, broadcast-paired lanes, 3-stage cp.async pipeline",
        "compute-bound"},
       plan_warp_tiled},
      {{"cublas", Role::reference, "cublasSgemm, strict fp32 (CUBLAS_DEFAULT_MATH, no TF32)",
        "compute-bound"},
       plan_cublas},
  };
}

// ---- correctness --------------------------------------------------------------------------------
//
// A full fp64 CPU product at 4096³ is 69 G multiply-adds: minutes. Up to kFullCheckMax every
// element is checked; above it, a grid of ~70 rows x ~70 columns (the first and last rows and
// columns, so the four corners; both sides of the last 16- and 128-wide tile boundary; the rest
// spread evenly with a deterministic jitter), each computed in double on the CPU.
//
// Tolerance. Summing K products in fp32 with FMAs, in any order, rounds each partial sum once:
// the error is at most ~K·u·Σ_k|A_ik·B_kj| (u = 2^-24), and with rounding errors of random sign
// it grows like sqrt(K)·u·Σ|A·B|. We allow eps_K = sqrt(K)·2^-23 (= 2·sqrt(K)·u) times
// S = max over the checked elements of Σ_k|A_ik·B_kj|, as one absolute bound:
//     |got - ref| <= tolerance_abs = eps_K · S,   tolerance_rel = 0,
// which is the report's rule (abs + rel·|ref|) exactly. For our inputs (uniform in [-1, 1),
// partial sums of random sign) the actual fp32 error is ~0.5·u·S in standard deviation at any
// K, so the bound sits ~30 standard deviations (K = 64) to ~240 (K = 4096) away from it. A real
// bug is far larger: a missed or doubled k term costs ~|A_ik·B_kj| ~ 0.25 ~ S/K, ~30x the
// bound at 4096; TF32 inputs (2^-11 rounding) give errors of ~5e-4·S/sqrt(K) in standard
// deviation, about the bound at 4096, so hundreds of the ~5,000 sampled elements would fail.
constexpr int kFullCheckMax = 512;
constexpr int kSamplesPerSide = 64;

std::vector<int> checked_indices(int n) {
  std::vector<int> idx;
  if (n <= kFullCheckMax) {
    idx.resize(n);
    for (int i = 0; i < n; ++i) idx[i] = i;
    return idx;
  }
  idx = {0, 1, n / 2, n - 2, n - 1};
  for (int tile : {kSmemTile, rt::kBM}) {
    const int last = (n - 1) / tile * tile;  // first index of the last (maybe partial) tile
    idx.push_back(last);
    idx.push_back(last - 1);
  }
  const int stride = n / kSamplesPerSide;
  for (int s = 0; s < kSamplesPerSide; ++s) idx.push_back(s * stride + (s * 97 + 13) % stride);
  std::sort(idx.begin(), idx.end());
  idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  return idx;
}

class MatmulRun final : public LabRun {
 public:
  MatmulRun(const Variants& variants, Shape shape, std::uint64_t seed)
      : variants_(variants),
        shape_(shape),
        host_a_(static_cast<size_t>(shape.m) * shape.k),
        host_b_(static_cast<size_t>(shape.k) * shape.n) {
    const size_t c_elements = static_cast<size_t>(shape.m) * shape.n;
    // A, B, C, plus room for cuBLAS's handle and workspace.
    constexpr size_t kCublasHeadroom = size_t{64} << 20;
    require_device_memory(
        (host_a_.size() + host_b_.size() + c_elements) * sizeof(float) + kCublasHeadroom,
        "matmul at this size");
    a_ = DeviceBuffer<float>(host_a_.size());
    b_ = DeviceBuffer<float>(host_b_.size());
    c_ = DeviceBuffer<float>(c_elements);
    fill_uniform(host_a_, stream_seed(seed, 1));
    fill_uniform(host_b_, stream_seed(seed, 2));
    GPULAB_CUDA_CHECK(cudaMemcpy(a_.get(), host_a_.data(), a_.bytes(), cudaMemcpyHostToDevice));
    GPULAB_CUDA_CHECK(cudaMemcpy(b_.get(), host_b_.data(), b_.bytes(), cudaMemcpyHostToDevice));
    cublas_ = CublasHandle::create();
  }

  report::WorkModel work() const override {
    const double m = shape_.m, n = shape_.n, k = shape_.k;
    return {4.0 * (m * k + k * n), 4.0 * m * n, 2.0 * m * n * k};
  }

  std::vector<KernelLaunch> kernels(const std::string& variant) const override {
    const KernelPlan p = variants_[variant].plan(shape_);
    return {{p.name, reinterpret_cast<const void*>(p.fn), p.grid, p.block, 0}};
  }

  void launch(const std::string& variant, cudaStream_t stream) override {
    const KernelPlan p = variants_[variant].plan(shape_);
    if (p.fn) {
      p.fn<<<p.grid, p.block, 0, stream>>>(a_.get(), b_.get(), c_.get(), shape_.m, shape_.n,
                                           shape_.k);
    } else {
      sgemm_cublas(stream);
    }
    GPULAB_CUDA_CHECK_LAUNCH();
  }

  void poison_outputs(cudaStream_t stream) override { poison(c_.get(), c_.bytes(), stream); }

  report::Check check(const std::string& /*variant*/) override {
    if (reference_.empty()) compute_reference();
    const size_t nr = rows_.size(), nc = cols_.size();
    const size_t n = static_cast<size_t>(shape_.n);

    // The checked rows of C, whole.
    std::vector<float> got(nr * n);
    if (nr == static_cast<size_t>(shape_.m)) {
      GPULAB_CUDA_CHECK(cudaMemcpy(got.data(), c_.get(), c_.bytes(), cudaMemcpyDeviceToHost));
    } else {
      for (size_t r = 0; r < nr; ++r)
        GPULAB_CUDA_CHECK(cudaMemcpy(got.data() + r * n, c_.get() + static_cast<size_t>(rows_[r]) * n,
                                     n * sizeof(float), cudaMemcpyDeviceToHost));
    }

    report::Check check;
    check.tolerance_abs = tolerance_abs_;
    check.tolerance_rel = 0;
    check.elements = nr * nc;
    double max_ref = 0;
    size_t first_bad = nr * nc;
    for (size_t r = 0; r < nr; ++r) {
      for (size_t j = 0; j < nc; ++j) {
        const double g = got[r * n + cols_[j]];
        const double ref = reference_[r * nc + j];
        max_ref = std::max(max_ref, std::fabs(ref));
        const double err = std::fabs(g - ref);
        if (!(err <= tolerance_abs_)) {  // NaN fails
          ++check.mismatches;
          if (first_bad == nr * nc) first_bad = r * nc + j;
        }
        check.max_abs_error = std::isnan(err) ? INFINITY : std::max(check.max_abs_error, err);
      }
    }
    check.max_rel_error = max_ref > 0 ? check.max_abs_error / max_ref : check.max_abs_error;
    if (check.mismatches == 0) {
      check.status = report::CheckStatus::passed;
    } else {
      check.status = report::CheckStatus::failed;
      const size_t r = first_bad / nc, j = first_bad % nc;
      check.message = fmt::format(
          "{} of {} checked elements differ; first at C[{}][{}]: got {}, expected {} "
          "(tolerance {:.3g})",
          check.mismatches, check.elements, rows_[r], cols_[j], got[r * n + cols_[j]],
          reference_[r * nc + j], tolerance_abs_);
    }
    return check;
  }

 private:
  const Variants& variants_;

  void sgemm_cublas(cudaStream_t stream) {
    const float alpha = 1.0f, beta = 0.0f;
    GPULAB_CUBLAS_CHECK(cublasSetStream(cublas_.get(), stream));
    // Column-major C^T (N x M) = B^T (N x K) · A^T (K x M): see the note above CublasHandle.
    GPULAB_CUBLAS_CHECK(cublasSgemm(cublas_.get(), CUBLAS_OP_N, CUBLAS_OP_N, shape_.n, shape_.m,
                                    shape_.k, &alpha, b_.get(), shape_.n, a_.get(), shape_.k,
                                    &beta, c_.get(), shape_.n));
  }

  // fp64 reference and Σ|A·B| at the checked positions; the inputs never change, so once.
  void compute_reference() {
    rows_ = checked_indices(shape_.m);
    cols_ = checked_indices(shape_.n);
    const int k = shape_.k, n = shape_.n;
    const size_t nr = rows_.size(), nc = cols_.size();

    std::vector<double> b_cols(nc * k);  // the checked columns of B, contiguous
    for (size_t j = 0; j < nc; ++j)
      for (int i = 0; i < k; ++i)
        b_cols[j * k + i] = host_b_[static_cast<size_t>(i) * n + cols_[j]];

    reference_.assign(nr * nc, 0.0);
    double max_abs_sum = 0;
    std::vector<double> a_row(k);
    for (size_t r = 0; r < nr; ++r) {
      const float* src = host_a_.data() + static_cast<size_t>(rows_[r]) * k;
      for (int i = 0; i < k; ++i) a_row[i] = src[i];
      for (size_t j = 0; j < nc; ++j) {
        const double* col = b_cols.data() + j * k;
        double sum = 0, abs_sum = 0;
        for (int i = 0; i < k; ++i) {
          const double p = a_row[i] * col[i];
          sum += p;
          abs_sum += std::fabs(p);
        }
        reference_[r * nc + j] = sum;
        max_abs_sum = std::max(max_abs_sum, abs_sum);
      }
    }
    const double eps_k = std::sqrt(static_cast<double>(k)) * std::ldexp(1.0, -23);
    tolerance_abs_ = eps_k * max_abs_sum;
  }

  Shape shape_;
  std::vector<float> host_a_, host_b_;
  DeviceBuffer<float> a_, b_, c_;
  CublasHandle cublas_;
  // Filled on the first check.
  std::vector<int> rows_, cols_;   // checked rows and columns of C (every pair is checked)
  std::vector<double> reference_;  // rows_.size() x cols_.size()
  double tolerance_abs_ = 0;
};

std::unique_ptr<LabRun> setup_run(const Variants& variants, const ParamValues& params,
                                  std::uint64_t seed) {
  const int size = static_cast<int>(params.at("size"));
  return std::make_unique<MatmulRun>(variants, Shape{size, size, static_cast<int>(params.at("k"))},
                                     seed);
}

std::unique_ptr<Lab> make_lab() {
  LabSpec spec;
  spec.name = "matmul";
  spec.topic = "data reuse: shared-memory and register tiling";
  spec.summary = "fp32 C = A·B: from one thread per output to warp tiles, against cuBLAS";
  spec.teaching_point =
      "A matrix multiply reuses every input N times, so its speed depends on where that reuse "
      "happens. The naive kernel fetches two operands from the memory hierarchy for every "
      "multiply-add and spends its time waiting on loads; 16x16 shared-memory tiles cut global "
      "loads 16-fold but still feed each FMA from two shared-memory reads. Giving each thread "
      "an 8x8 block of C in registers turns every loaded value into 8 FMAs, and the FMA units "
      "finally set the pace, within reach of cuBLAS. The rest of the gap is latency and shared "
      "bandwidth: asynchronous copies keep the next tiles in flight, and pairing the lanes that "
      "read the same shared words halves the wavefronts.";
  spec.params = {
      {"size", "M = N: rows of A and C, columns of B and C", 4096, 64, 16384, true},
      // K alone moves the arithmetic intensity: 2MNK flops on 4(MK + KN + MN) bytes is about
      // K/2 flops per byte while K << M = N (C's bytes dominate), so at 4096 x 4096 a K of 16
      // (~8 flops/B) sits below the ridge (~14 on the H200, ~20 on the H100) and a K of 256
      // (~120) far above it: `gpulab sweep matmul --axis k=16:4096:*4` crosses it.
      {"k", "K: columns of A and rows of B, the length of each dot product", 4096, 8, 16384, true},
  };
  return make_table_lab(std::move(spec), variant_table(), setup_run);
}

}  // namespace
}  // namespace gpulab::labs

GPULAB_REGISTER_LAB(gpulab::labs::make_lab)
