// Lab `pitched`: out = 2 * in + 1 over a width x height float matrix whose rows are 1001 floats,
// stored packed (row r at r * width floats) or pitched (rows padded by cudaMallocPitch).
//
// Both variants run the same kernel, one thread per element, threadIdx.x along the row: only
// where the rows start differs. A packed row of 1001 floats is 4004 bytes, 4 bytes past a whole
// number of 32-byte sectors, so row r starts 4r bytes (mod 32) into a sector and 7 rows in 8
// start mid-sector. cudaMallocPitch rounds each row up to a multiple of the device's pitch
// alignment (4096 bytes for 4004 if that is 512), so that every row starts on an aligned
// boundary, and hands back that row length in bytes: the pitch.
//
// Default size: 32768 rows of 1001 floats, 131 MB read + 131 MB written (0.53 GB of device
// memory for both layouts), ~0.1 ms at the H200's one-float-per-thread copy speed.
#include <cstdint>
#include <memory>
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

constexpr int kBlockX = 32;  // one warp along a row
constexpr int kBlockY = 8;   // 8 rows per block, 256 threads

// 2x is exact, so fused or not the GPU rounds the same single addition as the CPU: exact check.
__host__ __device__ inline float scale(float x) { return x * 2.0f + 1.0f; }

// ---- the kernel (both variants) -----------------------------------------------------------------
// A warp reads 32 consecutive floats of one row: 128 bytes. When the row starts on a sector
// boundary that is 4 sectors per request; when it starts 4..28 bytes into a sector, 5.
// With 1001 floats a row is 31 full warps and one of 9 threads (36 bytes, 2 sectors), so:
//   pitched: every row 31 x 4 + 2 = 126 sectors for 32 requests, 3.94 per request;
//   packed:  1 row in 8 like that, 7 in 8 take 31 x 5 + 2 = 157: 4.79 per request on average,
//            22% more sectors through L1 and L2 (loads and stores alike).
// DRAM sees little of it: the sector a misaligned row shares with its neighbour is read once
// and serves both. The pitch costs a few percent of padding (92 bytes per 4004-byte row with a
// 4096-byte pitch, 2.3%).
//
// Pitches are in bytes: a row is found by stepping through the matrix as chars, then indexed as
// floats (both pitches are multiples of 4, so the row pointers stay float-aligned).
__global__ void scale_rows(const float* __restrict__ in, std::size_t in_pitch,
                           float* __restrict__ out, std::size_t out_pitch, int width, int height) {
  const int col = blockIdx.x * kBlockX + threadIdx.x;
  const int row = blockIdx.y * kBlockY + threadIdx.y;
  if (col >= width || row >= height) return;
  const auto* in_row = reinterpret_cast<const float*>(reinterpret_cast<const char*>(in) +
                                                      static_cast<std::size_t>(row) * in_pitch);
  auto* out_row = reinterpret_cast<float*>(reinterpret_cast<char*>(out) +
                                           static_cast<std::size_t>(row) * out_pitch);
  // PROBLEM: rows that start mid-sector: 5 sectors per request where 4 would do
  out_row[col] = scale(in_row[col]);
}

// ---- device matrices ----------------------------------------------------------------------------

struct CudaFree {
  void operator()(void* p) const noexcept { GPULAB_CUDA_CHECK_NOEXCEPT(cudaFree(p)); }
};

// One matrix in device memory, rows `pitch` bytes apart.
struct DeviceMatrix {
  std::unique_ptr<void, CudaFree> data;
  std::size_t pitch = 0;
  float* get() const { return static_cast<float*>(data.get()); }
};

enum class Layout { packed, pitched };

DeviceMatrix allocate(Layout layout, int width, int height) {
  const std::size_t row_bytes = static_cast<std::size_t>(width) * sizeof(float);
  void* p = nullptr;
  std::size_t pitch = row_bytes;
  if (layout == Layout::pitched) {
    GPULAB_CUDA_CHECK(cudaMallocPitch(&p, &pitch, row_bytes, height));
  } else {
    GPULAB_CUDA_CHECK(cudaMalloc(&p, row_bytes * height));
  }
  return {std::unique_ptr<void, CudaFree>(p), pitch};
}

// ---- the lab ----------------------------------------------------------------------------------

struct PitchedVariant {
  VariantSpec spec;
  const char* kernel_name;
  Layout layout;
};
using Variants = VariantTable<PitchedVariant>;

std::vector<PitchedVariant> variant_table() {
  return {
      {{"unpitched", Role::baseline,
        "rows packed at width floats: 7 rows in 8 start mid-sector, ~4.8 sectors per request",
        ""},
       "scale_rows_packed", Layout::packed},
      {{"pitched", Role::optimized,
        "rows padded by cudaMallocPitch: every row starts aligned, ~3.9 sectors per request", ""},
       "scale_rows_pitched", Layout::pitched},
  };
}

class PitchedRun final : public LabRun {
 public:
  PitchedRun(const Variants& variants, int width, int height, std::uint64_t seed)
      : variants_(variants),
        width_(width),
        height_(height),
        elements_(static_cast<std::size_t>(width) * height),
        host_in_(elements_) {
    // Packed in and out, plus pitched in and out with rows rounded up to 512 bytes (an upper
    // estimate of cudaMallocPitch's alignment).
    const std::size_t row_bytes = static_cast<std::size_t>(width) * sizeof(float);
    const std::size_t pitched_row_bytes = (row_bytes + 511) / 512 * 512;
    require_device_memory(2 * (row_bytes + pitched_row_bytes) * height, "pitched at this size");
    fill_uniform(host_in_, seed);
    for (Layout layout : {Layout::packed, Layout::pitched}) {
      auto& m = matrices(layout);
      m.in = allocate(layout, width_, height_);
      m.out = allocate(layout, width_, height_);
      GPULAB_CUDA_CHECK(cudaMemcpy2D(m.in.get(), m.in.pitch, host_in_.data(), row_bytes, row_bytes,
                                     height_, cudaMemcpyHostToDevice));
    }
  }

  report::WorkModel work() const override {
    const double bytes = static_cast<double>(elements_) * sizeof(float);
    return {bytes, bytes, 2.0 * static_cast<double>(elements_)};  // one multiply-add each
  }

  std::vector<KernelLaunch> kernels(const std::string& variant) const override {
    const auto& v = variants_[variant];
    return {{v.kernel_name, reinterpret_cast<const void*>(scale_rows), grid(), block(), 0}};
  }

  void launch(const std::string& variant, cudaStream_t stream) override {
    const auto& m = matrices(variants_[variant].layout);
    scale_rows<<<grid(), block(), 0, stream>>>(m.in.get(), m.in.pitch, m.out.get(), m.out.pitch,
                                               width_, height_);
    GPULAB_CUDA_CHECK_LAUNCH();
  }

  // Padding included: nothing reads it, but a kernel that wrote to the wrong row would.
  void poison_outputs(cudaStream_t stream) override {
    for (Layout layout : {Layout::packed, Layout::pitched}) {
      const auto& out = matrices(layout).out;
      poison(out.get(), out.pitch * height_, stream);
    }
  }

  report::Check check(const std::string& variant) override {
    if (reference_.empty()) {
      reference_.resize(elements_);
      parallel_for(elements_, [this](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) reference_[i] = scale(host_in_[i]);
      });
    }
    const auto& out = matrices(variants_[variant].layout).out;
    const std::size_t row_bytes = static_cast<std::size_t>(width_) * sizeof(float);
    std::vector<float> got(elements_);
    GPULAB_CUDA_CHECK(cudaMemcpy2D(got.data(), row_bytes, out.get(), out.pitch, row_bytes,
                                   height_, cudaMemcpyDeviceToHost));
    return compare(got.data(), reference_.data(), elements_, Tolerance{0, 0});  // see scale()
  }

 private:
  const Variants& variants_;

  struct Matrices {
    DeviceMatrix in, out;
  };

  Matrices& matrices(Layout layout) { return layout == Layout::packed ? packed_ : pitched_; }

  dim3 grid() const {
    return dim3((width_ + kBlockX - 1) / kBlockX, (height_ + kBlockY - 1) / kBlockY);
  }
  static dim3 block() { return dim3(kBlockX, kBlockY); }

  int width_, height_;
  std::size_t elements_;
  std::vector<float> host_in_;
  std::vector<float> reference_;  // computed on the first check
  Matrices packed_, pitched_;
};

std::unique_ptr<LabRun> setup_run(const Variants& variants, const ParamValues& params,
                                  std::uint64_t seed) {
  return std::make_unique<PitchedRun>(variants, static_cast<int>(params.at("width")),
                                      static_cast<int>(params.at("height")), seed);
}

std::unique_ptr<Lab> make_lab() {
  LabSpec spec;
  spec.name = "pitched";
  spec.topic = "2D arrays: row alignment, cudaMallocPitch";
  spec.summary = "scale a matrix of 1001-float rows, packed or pitched: where rows start";
  spec.teaching_point =
      "When a row's length is not a multiple of 32 bytes, packed rows start in the middle of "
      "sectors and each warp reading a row touches one sector more than it needs. "
      "cudaMallocPitch pads every row to an aligned pitch, given in bytes, so that rows start "
      "on sector boundaries. On current GPUs the gain is modest (about a fifth fewer sectors, "
      "little DRAM difference), but it costs only a few percent of padding.";
  spec.params = {
      {"width", "floats per row", 1001, 1, 4096, false},
      {"height", "rows", 32768, 1, 65536, true},
  };
  return make_table_lab(std::move(spec), variant_table(), setup_run);
}

}  // namespace
}  // namespace gpulab::labs

GPULAB_REGISTER_LAB(gpulab::labs::make_lab)
