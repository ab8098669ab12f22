// Lab `transpose`: out[c][r] = in[r][c] for a rows x cols float matrix.
//
// A transpose does no arithmetic, so its only cost is moving bytes: the fastest version reads
// and writes every element once, in full 32-byte sectors, and runs at the copy roof. The
// variants below differ only in how a warp's 32 threads touch global and shared memory.
//
// The first four variants use the same launch: one 32 x 8 thread block per 32 x 32 tile, each
// thread moving 4 elements (rows ty, ty+8, ty+16, ty+24 of the tile); the last moves 64 x 64
// tiles with 16-byte accesses. 8192 x 8192 floats is 268 MB read + 268 MB written; at the
// H200's ~4.2 TB/s copy roof that is ~0.13 ms.
#include <algorithm>
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

constexpr int kTile = 32;        // tile edge = warp width: one warp covers one tile row
constexpr int kBlockRows = 8;    // threads per block = 32 x 8 = 256; 4 elements per thread

// ---- naive ----------------------------------------------------------------------------------
// Reads are coalesced: a warp reads 32 consecutive floats of one input row, 128 B = 4 sectors,
// the ideal. Writes are not: those 32 values go down one *column* of the output, 4 * rows bytes
// apart, so each warp store touches 32 different sectors and uses 4 of each sector's 32 bytes:
// 8x the store sectors of a coalesced write (32 sectors per request instead of 4). L2 merges
// the partial sectors only if the line survives until its neighbours arrive; at 8192 columns
// apart they often do not, and DRAM sees partial writes and read-modify-write traffic too.
__global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out, int rows,
                                int cols) {
  const int col = blockIdx.x * kTile + threadIdx.x;
  const int row0 = blockIdx.y * kTile + threadIdx.y;
  if (col >= cols) return;
  for (int j = 0; j < kTile; j += kBlockRows) {
    const int row = row0 + j;
    // PROBLEM: the column-strided store: 32 sectors per warp store where 4 would do
    if (row < rows) out[static_cast<size_t>(col) * rows + row] = in[static_cast<size_t>(row) * cols + col];
  }
}

// ---- shared-memory tiles --------------------------------------------------------------------
// Stage a 32 x 32 tile in shared memory: read it row by row from the input (coalesced), then
// write it row by row to the output (coalesced), reading the tile by *column* in between. Both
// global accesses now move 4 sectors per request. What remains is the shared-memory column
// read, and the three tile layouts below differ only there. Shared memory has 32 banks of
// 4 bytes; word w lives in bank w % 32, and a warp's access takes one wavefront per distinct
// word address within the busiest bank.

// 32 x 32, row-major. Element (r, c) is word 32r + c, bank c. A column read (fixed c, r = lane)
// puts all 32 lanes in bank c: 32 wavefronts for one instruction, the shared pipe serializes
// the warp 32-fold. Row writes (fixed r, c = lane) hit 32 banks: 1 wavefront.
struct RowMajorTile {
  static constexpr int kWords = kTile * kTile;
  __device__ static int at(int r, int c) { return r * kTile + c; }
};

// 32 x 33: one unused word per row shifts each row by one bank. Element (r, c) is word
// 33r + c, bank (r + c) % 32, so a column read (r = lane) hits 32 different banks: 1 wavefront.
// Cost: 32 words (128 B) of shared memory per block that hold nothing.
struct PaddedTile {
  static constexpr int kWords = kTile * (kTile + 1);
  __device__ static int at(int r, int c) { return r * (kTile + 1) + c; }
};

// 32 x 32 with the column index XOR-ed with the row: element (r, c) is stored at word
// 32r + (c ^ r), bank c ^ r. For a fixed c, r -> c ^ r is a permutation of 0..31, and so is
// c -> c ^ r for a fixed r: rows and columns both spread over all 32 banks, 1 wavefront each,
// with no wasted words. (This is the layout Hopper's TMA and CUTLASS call a swizzle.)
struct SwizzledTile {
  static constexpr int kWords = kTile * kTile;
  __device__ static int at(int r, int c) { return r * kTile + (c ^ r); }
};

template <typename Tile>
__global__ void transpose_shared(const float* __restrict__ in, float* __restrict__ out, int rows,
                                 int cols) {
  __shared__ float tile[Tile::kWords];
  const int tx = threadIdx.x, ty = threadIdx.y;

  // Load: lane tx reads input column blockIdx.x*32 + tx -> consecutive addresses.
  int col = blockIdx.x * kTile + tx;
  int row = blockIdx.y * kTile + ty;
  for (int j = 0; j < kTile; j += kBlockRows) {
    if (col < cols && row + j < rows)
      tile[Tile::at(ty + j, tx)] = in[static_cast<size_t>(row + j) * cols + col];
  }
  __syncthreads();

  // Store: the block's tile lands at output rows blockIdx.x*32.., columns blockIdx.y*32..;
  // lane tx writes output column blockIdx.y*32 + tx -> consecutive addresses again.
  col = blockIdx.y * kTile + tx;
  row = blockIdx.x * kTile + ty;
  for (int j = 0; j < kTile; j += kBlockRows) {
    if (col < rows && row + j < cols)
      // PROBLEM: the tile read by column: in a RowMajorTile all 32 lanes hit one bank
      out[static_cast<size_t>(row + j) * rows + col] = tile[Tile::at(tx, ty + j)];
  }
}

// ---- 64 x 64 tiles, 16-byte accesses ------------------------------------------------------------
// padded and swizzled have coalesced global accesses and conflict-free shared ones, yet stop short
// of the H200's copy roof (docs/cards.md): what they lack is bytes in flight.
// By Little's law an SM sustains its share of the roof only with latency x bandwidth / SMs
// outstanding: ~0.7 us x 4.26 TB/s / 132 = ~23 KB per SM. (The vectorize lab shows the scale: a
// copy with 4 bytes in flight per thread, 8 KB per SM, stays well short of the roof; with 16
// bytes, 32 KB per SM, it reaches it.) A 32 x 32 block has 4 KB of loads in flight, 8 blocks per SM
// 32 KB, but only while every block is in its load phase: each block waits for its loads, meets the
// barrier (padded's largest stall after the loads themselves), turns the tile, stores it and
// exits before its slot takes a new tile. On average an SM has well under 23 KB outstanding.
//
// Here a block of 256 threads moves a 64 x 64 tile and each thread issues its four 16-byte loads
// before it stores any of them: 64 B per thread, 16 KB per block, 128 KB per SM with 8 blocks
// resident at the start of their load phases, enough to stay above ~23 KB while most blocks are
// between loads. At 8192 x 8192: 16,384 blocks, 4x fewer block launches and barriers per byte.
//
// Global: a warp's float4 load covers 256 contiguous bytes of two input rows, its float4 store
// 128 bytes of four output rows: 16 sectors per request, all used, and a quarter of the memory
// instructions of 4-byte accesses.
//
// Shared: 64 x 64 floats, no padding (16 KB per block, 8 blocks = 128 KB of the SM's 228 KB),
// with 16-byte chunks XOR-swizzled: element (r, c) is word 64r + 4·((c/4) ^ (r/4 % 8)) + c % 4.
//  - Tile stores: a thread's float4 (4 columns of one row) stays one 16-byte chunk, STS.128. A
//    128-bit access is served 8 lanes at a time; 8 consecutive lanes write chunks q ^ s of one
//    row for 8 consecutive q (s = r/4 % 8 fixed): 8 chunks, 32 banks, the minimum of 4
//    wavefronts.
//  - Tile loads: an output quad out[c][4p..4p+3] is tile elements (4p..4p+3, c), 4 scalar loads.
//    For one of them a warp reads rows 4p+i for 8 consecutive p, at 4 consecutive columns c:
//    bank 4·((c/4) ^ (p % 8)) + c % 4, with c/4 fixed, p % 8 taking all 8 values and c % 4 all 4:
//    32 banks, 1 wavefront. Unswizzled (bank c % 32) the 8 rows would share 4 banks: 8-way.
//
// Edges: the float4 path needs 16-byte aligned rows, cols % 4 == 0 for the input and
// rows % 4 == 0 for the output (cudaMalloc bases are 256-byte aligned). Then a quad that starts
// in range is wholly in range, and one guard per quad suffices; out-of-range quads are neither
// read nor written (a tile element is out of range in the input exactly when its transposed
// place is out of range in the output). Other shapes use the kScalar instance: the same tile,
// 4-byte accesses, each guarded.
//
// Expected finding: memory-bound-at-roof, at >= 90% of the copy roof.
constexpr int kWideTile = 64;      // tile edge of the vectorized variant
constexpr int kWideThreads = 256;  // 64 rows x 16 quads = 1024 quads: 4 per thread
constexpr int kWideQuads = kWideTile / 4;

enum class Access { kVector, kScalar };

// Word of element (r, c) of the 64 x 64 tile: 16-byte chunk c/4 XOR-ed with r/4 % 8 (see above).
__device__ __forceinline__ int wide_at(int r, int c) {
  return r * kWideTile + 4 * ((c / 4) ^ ((r / 4) % 8)) + c % 4;
}

// M[row][col..col+3] of a rows x cols row-major matrix; zeros outside it (never stored).
template <Access kAccess>
__device__ __forceinline__ float4 load_quad(const float* __restrict__ m, int rows, int cols,
                                            int row, int col) {
  float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (row >= rows) return v;
  const float* p = m + static_cast<size_t>(row) * cols + col;
  if constexpr (kAccess == Access::kVector) {
    if (col < cols) v = *reinterpret_cast<const float4*>(p);
  } else {
    if (col + 0 < cols) v.x = p[0];
    if (col + 1 < cols) v.y = p[1];
    if (col + 2 < cols) v.z = p[2];
    if (col + 3 < cols) v.w = p[3];
  }
  return v;
}

// M[row][col..col+3] = v, for the parts inside the rows x cols matrix.
template <Access kAccess>
__device__ __forceinline__ void store_quad(float* __restrict__ m, int rows, int cols, int row,
                                           int col, float4 v) {
  if (row >= rows) return;
  float* p = m + static_cast<size_t>(row) * cols + col;
  if constexpr (kAccess == Access::kVector) {
    if (col < cols) *reinterpret_cast<float4*>(p) = v;
  } else {
    if (col + 0 < cols) p[0] = v.x;
    if (col + 1 < cols) p[1] = v.y;
    if (col + 2 < cols) p[2] = v.z;
    if (col + 3 < cols) p[3] = v.w;
  }
}

template <Access kAccess>
__global__ void __launch_bounds__(kWideThreads)
    transpose_vectorized(const float* __restrict__ in, float* __restrict__ out, int rows,
                         int cols) {
  __shared__ __align__(16) float tile[kWideTile * kWideTile];
  // Thread indices from the unsigned threadIdx.x: the compiler then knows them non-negative and
  // turns the divisions below into shifts.
  const int r0 = threadIdx.x / kWideQuads, q = threadIdx.x % kWideQuads;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row0 = blockIdx.y * kWideTile;  // the tile's first input row (output column)
  const int col0 = blockIdx.x * kWideTile;  // its first input column (output row)

  // Load: thread t takes quad q = t % 16 of tile rows t/16 + 16j. All four loads are issued
  // before the first store to shared memory uses one: 64 bytes in flight per thread.
  float4 v[4];
#pragma unroll
  for (int j = 0; j < 4; ++j)
    v[j] = load_quad<kAccess>(in, rows, cols, row0 + r0 + 16 * j, col0 + 4 * q);
#pragma unroll
  for (int j = 0; j < 4; ++j) *reinterpret_cast<float4*>(&tile[wide_at(r0 + 16 * j, 4 * q)]) = v[j];
  __syncthreads();

  // Store: 64 output rows x 16 quads. Warp w, step j covers output rows 4·(g/2) + lane/8 and
  // quads 8·(g%2) + lane%8, g = w + 8j: 4 rows x 128 contiguous bytes per instruction.
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int g = warp + 8 * j;
    const int c = 4 * (g / 2) + lane / 8;  // output row col0 + c = tile column c
    const int p = 8 * (g % 2) + lane % 8;  // output columns row0 + 4p.. = tile rows 4p..4p+3
    const float4 o = make_float4(tile[wide_at(4 * p + 0, c)], tile[wide_at(4 * p + 1, c)],
                                 tile[wide_at(4 * p + 2, c)], tile[wide_at(4 * p + 3, c)]);
    store_quad<kAccess>(out, cols, rows, col0 + c, row0 + 4 * p, o);
  }
}

// ---- the lab ----------------------------------------------------------------------------------

using KernelFn = void (*)(const float*, float*, int, int);

struct TransposeVariant {
  VariantSpec spec;
  const char* kernel_name;
  KernelFn kernel;
  // The launch: one block of this shape per tile x tile piece of the input.
  int tile = kTile;
  dim3 block = dim3(kTile, kBlockRows);
  // A kernel with 16-byte accesses names the instance that runs shapes whose rows are not
  // 16-byte aligned (rows or cols not a multiple of 4); nullptr: `kernel` runs every shape.
  const char* unaligned_kernel_name = nullptr;
  KernelFn unaligned_kernel = nullptr;
};
using Variants = VariantTable<TransposeVariant>;

// Where the conflict-free 32x32 tiles stand depends on the card. The bytes in flight an SM
// needs to sustain its share of the roof scale with the card's bandwidth (Little's law, above):
// ~0.7 us x 4.26 TB/s / 132 = ~23 KB on the H200, more than the tile keeps in flight, but
// ~0.7 us x 3.03 TB/s / 132 = ~16 KB on the H100 80GB HBM3, about what it keeps: the measured
// shares of the two cards' roofs (docs/cards.md) fall on either side of at_roof.roof_fraction
// (0.87). Either way the bank conflicts and strided writes are gone.
const report::Expectation kConflictFreeTile = report::Expectation::one_of(
    {"memory-bound-below-roof", "memory-bound-at-roof"},
    "the card decides: the tile's bytes in flight reach 92% of the H100's copy roof, ~82% of the "
    "H200's, either side of at_roof.roof_fraction (0.87)");

std::vector<TransposeVariant> variant_table() {
  return {
      {{"naive", Role::baseline, "one thread per element; coalesced reads, column-strided writes",
        "uncoalesced-global"},
       "transpose_naive",
       transpose_naive},
      {{"tiled", Role::optimized,
        "32x32 shared tile; coalesced both ways, 32-way bank conflicts reading tile columns",
        "shared-bank-conflicts"},
       "transpose_tiled",
       transpose_shared<RowMajorTile>},
      {{"padded", Role::optimized, "32x33 shared tile: padding spreads tile columns over all banks",
        kConflictFreeTile},
       "transpose_padded",
       transpose_shared<PaddedTile>},
      {{"swizzled", Role::optimized, "32x32 shared tile with XOR-swizzled columns: no padding",
        kConflictFreeTile},
       "transpose_swizzled",
       transpose_shared<SwizzledTile>},
      {{"vectorized", Role::optimized,
        "64x64 swizzled tile moved with 16-byte loads and stores: 16 KB in flight per block",
        "memory-bound-at-roof"},
       "transpose_vectorized",
       transpose_vectorized<Access::kVector>,
       kWideTile,
       dim3(kWideThreads),
       "transpose_vectorized_scalar",
       transpose_vectorized<Access::kScalar>},
  };
}

// Cache-blocked CPU transpose: the reference every variant must match exactly.
// In 64 x 64 blocks (both sides stay in cache), on every core: a chunk of elements takes the rows
// that start in it.
void transpose_on_cpu(const std::vector<float>& in, std::vector<float>& out, int rows, int cols) {
  constexpr int kBlock = 64;
  const size_t width = static_cast<size_t>(cols);
  parallel_for(in.size(), [&](size_t begin, size_t end) {
    const int first = static_cast<int>((begin + width - 1) / width);
    const int last = static_cast<int>(std::min<size_t>((end + width - 1) / width, rows));
    for (int r0 = first; r0 < last; r0 += kBlock)
      for (int c0 = 0; c0 < cols; c0 += kBlock)
        for (int r = r0; r < std::min(r0 + kBlock, last); ++r)
          for (int c = c0; c < std::min(c0 + kBlock, cols); ++c)
            out[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];
  });
}

class TransposeRun final : public LabRun {
 public:
  TransposeRun(const Variants& variants, int rows, int cols, std::uint64_t seed)
      : variants_(variants),
        rows_(rows),
        cols_(cols),
        elements_(static_cast<size_t>(rows) * cols),
        host_in_(elements_) {
    require_device_memory(2 * elements_ * sizeof(float), "transpose at this size");
    in_ = DeviceBuffer<float>(elements_);
    out_ = DeviceBuffer<float>(elements_);
    fill_uniform(host_in_, seed);
    GPULAB_CUDA_CHECK(cudaMemcpy(in_.get(), host_in_.data(), in_.bytes(), cudaMemcpyHostToDevice));
  }

  report::WorkModel work() const override {
    const double bytes = static_cast<double>(elements_) * sizeof(float);
    return {bytes, bytes, 0.0};
  }

  std::vector<KernelLaunch> kernels(const std::string& variant) const override {
    const auto& v = variants_[variant];
    const Instance k = instance(v);
    return {{k.name, reinterpret_cast<const void*>(k.fn), grid(v), v.block, 0}};
  }

  void launch(const std::string& variant, cudaStream_t stream) override {
    const auto& v = variants_[variant];
    instance(v).fn<<<grid(v), v.block, 0, stream>>>(in_.get(), out_.get(), rows_, cols_);
    GPULAB_CUDA_CHECK_LAUNCH();
  }

  void poison_outputs(cudaStream_t stream) override { poison(out_.get(), out_.bytes(), stream); }

  report::Check check(const std::string& /*variant*/) override {
    if (reference_.empty()) {
      reference_.resize(elements_);
      transpose_on_cpu(host_in_, reference_, rows_, cols_);
    }
    return check_result(out_.get(), reference_, Tolerance{0, 0});  // exact: a copy
  }

 private:
  const Variants& variants_;

  struct Instance {
    const char* name;
    KernelFn fn;
  };
  // The kernel that runs this shape: the unaligned instance when rows are not 16-byte aligned.
  Instance instance(const TransposeVariant& v) const {
    const bool aligned = rows_ % 4 == 0 && cols_ % 4 == 0;
    if (v.unaligned_kernel && !aligned) return {v.unaligned_kernel_name, v.unaligned_kernel};
    return {v.kernel_name, v.kernel};
  }
  dim3 grid(const TransposeVariant& v) const {
    return dim3((cols_ + v.tile - 1) / v.tile, (rows_ + v.tile - 1) / v.tile);
  }

  int rows_, cols_;
  size_t elements_;
  std::vector<float> host_in_;
  std::vector<float> reference_;  // computed on the first check
  DeviceBuffer<float> in_, out_;
};

std::unique_ptr<LabRun> setup_run(const Variants& variants, const ParamValues& params,
                                  std::uint64_t seed) {
  return std::make_unique<TransposeRun>(variants, static_cast<int>(params.at("rows")),
                                        static_cast<int>(params.at("cols")), seed);
}

std::unique_ptr<Lab> make_lab() {
  LabSpec spec;
  spec.name = "transpose";
  spec.topic = "global coalescing, shared-memory bank conflicts";
  spec.summary = "matrix transpose: coalesce reads and writes through a shared-memory tile";
  spec.teaching_point =
      "A transpose reads rows and writes columns, so one of the two global accesses is strided "
      "unless a tile is staged in shared memory and turned around there. The tile fixes global "
      "memory but reading it by column sends a whole warp to one bank, 32 passes per access. "
      "Padding each tile row by one word, or XOR-swizzling the column index, spreads the column "
      "over all 32 banks. The last stretch to the copy roof is bytes in flight: 64x64 tiles "
      "moved with 16-byte loads and stores keep four times as many outstanding per block.";
  spec.params = {
      {"rows", "input rows (output columns)", 8192, 1, 32768, true},
      {"cols", "input columns (output rows)", 8192, 1, 32768, true},
  };
  return make_table_lab(std::move(spec), variant_table(), setup_run);
}

}  // namespace
}  // namespace gpulab::labs

GPULAB_REGISTER_LAB(gpulab::labs::make_lab)
