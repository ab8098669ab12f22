// Lab `transpose`: out[c][r] = in[r][c] for a rows x cols float matrix.
//
// A transpose does no arithmetic, so its only cost is moving bytes: the fastest version reads
// and writes every element once, in full 32-byte sectors, and runs at the copy roof. The
// variants below differ only in how a warp's 32 threads touch global and shared memory.
//
// Every variant uses the same launch: one 32 x 8 thread block per 32 x 32 tile, each thread
// moving 4 elements (rows ty, ty+8, ty+16, ty+24 of the tile). 8192 x 8192 floats is 268 MB
// read + 268 MB written; at the H200's ~4.2 TB/s copy roof that is ~0.13 ms.
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "labs/check.hpp"
#include "labs/cuda_check.hpp"
#include "labs/device_buffer.hpp"
#include "labs/harness.hpp"
#include "labs/random.hpp"
#include "labs/registry.hpp"
#include "labs/table_lab.hpp"

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
      out[static_cast<size_t>(row + j) * rows + col] = tile[Tile::at(tx, ty + j)];
  }
}

// ---- the lab ----------------------------------------------------------------------------------

using KernelFn = void (*)(const float*, float*, int, int);

struct TransposeVariant {
  VariantSpec spec;
  const char* kernel_name;
  KernelFn kernel;
};
using Variants = VariantTable<TransposeVariant>;

std::vector<TransposeVariant> variant_table() {
  return {
      {{"naive", Role::baseline, "one thread per element; coalesced reads, column-strided writes",
        "uncoalesced-global"},
       "transpose_naive", transpose_naive},
      {{"tiled", Role::optimized,
        "32x32 shared tile; coalesced both ways, 32-way bank conflicts reading tile columns",
        "shared-bank-conflicts"},
       "transpose_tiled", transpose_shared<RowMajorTile>},
      {{"padded", Role::optimized, "32x33 shared tile: padding spreads tile columns over all banks",
        "memory-bound-at-roof"},
       "transpose_padded", transpose_shared<PaddedTile>},
      {{"swizzled", Role::optimized, "32x32 shared tile with XOR-swizzled columns: no padding",
        "memory-bound-at-roof"},
       "transpose_swizzled", transpose_shared<SwizzledTile>},
  };
}

// Cache-blocked CPU transpose: the reference every variant must match exactly.
void transpose_on_cpu(const std::vector<float>& in, std::vector<float>& out, int rows, int cols) {
  constexpr int kBlock = 64;
  for (int r0 = 0; r0 < rows; r0 += kBlock)
    for (int c0 = 0; c0 < cols; c0 += kBlock)
      for (int r = r0; r < std::min(r0 + kBlock, rows); ++r)
        for (int c = c0; c < std::min(c0 + kBlock, cols); ++c)
          out[static_cast<size_t>(c) * rows + r] = in[static_cast<size_t>(r) * cols + c];
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
    return {{v.kernel_name, reinterpret_cast<const void*>(v.kernel), grid(), block(), 0}};
  }

  void launch(const std::string& variant, cudaStream_t stream) override {
    const auto& v = variants_[variant];
    v.kernel<<<grid(), block(), 0, stream>>>(in_.get(), out_.get(), rows_, cols_);
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

  dim3 grid() const { return dim3((cols_ + kTile - 1) / kTile, (rows_ + kTile - 1) / kTile); }
  static dim3 block() { return dim3(kTile, kBlockRows); }

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
      "over all 32 banks and brings the kernel to the copy roof.";
  spec.params = {
      {"rows", "input rows (output columns)", 8192, 1, 32768, true},
      {"cols", "input columns (output rows)", 8192, 1, 32768, true},
  };
  return make_table_lab(std::move(spec), variant_table(), setup_run);
}

}  // namespace
}  // namespace gpulab::labs

GPULAB_REGISTER_LAB(gpulab::labs::make_lab)
