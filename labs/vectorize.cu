// Lab `vectorize`: y[i] = x[i] * 2 + 1, one float at a time or four.
//
// The arithmetic is one FMA per 8 bytes moved, so the kernel is a copy as far as the hardware is
// concerned: it should run at the copy roof. What keeps a one-float-per-thread kernel below it
// is not coalescing (its accesses are perfect) but the number of bytes each thread keeps in
// flight: 132 SMs x 2048 threads x 4 bytes is ~1 MB outstanding, while covering the H200's DRAM
// latency at 4.8 TB/s takes several MB. A 16-byte load per thread quadruples the bytes in flight
// and divides the load/store instructions, their address arithmetic and the threads by four.
//
// Default size: 2^28 floats, 1 GiB read + 1 GiB written (2.1 GB of device memory), ~0.5 ms at
// the copy roof.
#include <algorithm>
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

// x * 2 is exact in float, so fused or not, CPU and GPU round the same single addition: the
// reference is compared exactly.
__host__ __device__ inline float scale(float x) { return x * 2.0f + 1.0f; }

__device__ inline float4 scale(float4 v) {
  return make_float4(scale(v.x), scale(v.y), scale(v.z), scale(v.w));
}

__device__ inline bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

// y[i] for i = first, first + step, ... < n, one float at a time.
__device__ inline void scale_scalar_range(const float* __restrict__ x, float* __restrict__ y,
                                          std::size_t first, std::size_t n, std::size_t step) {
  for (std::size_t i = first; i < n; i += step) y[i] = scale(x[i]);
}

// ---- scalar: one float per thread ---------------------------------------------------------------
// A warp loads 128 contiguous bytes (4 sectors, ideal) and stores 128. Per 4 bytes of payload a
// thread spends one 32-bit load, one store, index arithmetic and a bounds test (about 24 SASS
// instructions per warp), and has only that one load outstanding: 2^23 warps at 2^28 elements.
// Well short of the copy roof (docs/cards.md): latency-limited, not coalescing-limited.
__global__ void scale_scalar(const float* __restrict__ x, float* __restrict__ y, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  // PROBLEM: 4-byte loads and stores: few bytes in flight per thread
  if (i < n) y[i] = scale(x[i]);
}

// ---- float4 -------------------------------------------------------------------------------------
// One 16-byte load and one 16-byte store per four elements: a warp moves 512 contiguous bytes
// per instruction (16 sectors, all used), a quarter of the scalar kernel's load and store
// instructions, and four times the bytes in flight per thread. That is enough to reach the copy
// roof (docs/cards.md).
//
// A float4 access needs a 16-byte-aligned address. cudaMalloc returns 256-byte-aligned memory,
// but a pointer into the middle of a buffer need not be, so the alignment is tested at run time
// (a uniform branch: every thread takes the same side) and a misaligned pair falls back to
// scalar accesses. (A production kernel would peel a scalar head when x and y share the same
// misalignment; this one keeps the lesson simple.) The n % 4 elements past the last whole vector
// are done one float each by the first threads.
//
// kGridStride = false: one vector per thread, as many threads as vectors (2^26 at the default).
// kGridStride = true: one full wave of blocks (a multiple of the SM count, as many as fit at
// once), each thread looping over vectors a grid apart. Block scheduling and per-thread index
// setup happen once per thread instead of once per vector; the accesses are the same.
template <bool kGridStride>
__global__ void scale_float4(const float* __restrict__ x, float* __restrict__ y, std::size_t n) {
  const std::size_t thread = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  if (!aligned16(x) || !aligned16(y)) {
    scale_scalar_range(x, y, thread, n, threads);
    return;
  }
  const auto* x4 = reinterpret_cast<const float4*>(x);  // alignment checked above
  auto* y4 = reinterpret_cast<float4*>(y);
  const std::size_t vectors = n / 4;
  if constexpr (kGridStride) {
    for (std::size_t v = thread; v < vectors; v += threads) y4[v] = scale(x4[v]);
  } else {
    if (thread < vectors) y4[thread] = scale(x4[thread]);
  }
  const std::size_t tail = vectors * 4 + thread;  // at most 3 elements
  if (tail < n) y[tail] = scale(x[tail]);
}

// ---- the lab ----------------------------------------------------------------------------------

using KernelFn = void (*)(const float*, float*, std::size_t);

// How many blocks a variant launches: enough threads for one element (or vector) each, or one
// full wave of resident blocks.
enum class GridShape { one_per_element, one_per_vector, full_wave };

struct VectorizeVariant {
  VariantSpec spec;
  const char* kernel_name;
  KernelFn kernel;
  GridShape grid;
};
using Variants = VariantTable<VectorizeVariant>;

std::vector<VectorizeVariant> variant_table() {
  return {
      {{"scalar", Role::baseline, "one float per thread: 4-byte loads and stores", ""},
       "scale_scalar", scale_scalar, GridShape::one_per_element},
      {{"float4", Role::optimized, "one float4 per thread: 16-byte loads and stores",
        "memory-bound-at-roof"},
       "scale_float4", scale_float4<false>, GridShape::one_per_vector},
      {{"float4-grid-stride", Role::optimized,
        "float4 loads, one wave of blocks (SM count x blocks per SM), each thread looping",
        "memory-bound-at-roof"},
       "scale_float4_grid_stride", scale_float4<true>, GridShape::full_wave},
  };
}

// The buffers are allocated `misalign` floats longer and used from that offset, so that a
// non-zero misalign gives pointers the float4 path must refuse.
class VectorizeRun final : public LabRun {
 public:
  VectorizeRun(const Variants& variants, std::size_t n, int misalign, std::uint64_t seed)
      : variants_(variants), n_(n), misalign_(misalign), host_in_(n) {
    require_device_memory(2 * (n_ + misalign_) * sizeof(float), "vectorize at this size");
    in_ = DeviceBuffer<float>(n_ + misalign_);
    out_ = DeviceBuffer<float>(n_ + misalign_);
    fill_uniform(host_in_, seed);
    GPULAB_CUDA_CHECK(
        cudaMemcpy(x(), host_in_.data(), n_ * sizeof(float), cudaMemcpyHostToDevice));

    int device = 0, sms = 0, blocks_per_sm = 0;
    GPULAB_CUDA_CHECK(cudaGetDevice(&device));
    GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks_per_sm, scale_float4<true>, kBlock, 0));
    wave_blocks_ = static_cast<unsigned>(sms) * static_cast<unsigned>(std::max(blocks_per_sm, 1));
  }

  report::WorkModel work() const override {
    const double bytes = static_cast<double>(n_) * sizeof(float);
    return {bytes, bytes, 2.0 * static_cast<double>(n_)};  // one multiply-add per element
  }

  std::vector<KernelLaunch> kernels(const std::string& variant) const override {
    const auto& v = variants_[variant];
    return {{v.kernel_name, reinterpret_cast<const void*>(v.kernel), grid(v.grid), dim3(kBlock), 0}};
  }

  void launch(const std::string& variant, cudaStream_t stream) override {
    const auto& v = variants_[variant];
    v.kernel<<<grid(v.grid), kBlock, 0, stream>>>(x(), y(), n_);
    GPULAB_CUDA_CHECK_LAUNCH();
  }

  void poison_outputs(cudaStream_t stream) override { poison(y(), n_ * sizeof(float), stream); }

  report::Check check(const std::string& /*variant*/) override {
    if (reference_.empty()) {
      reference_.resize(n_);
      parallel_for(n_, [this](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) reference_[i] = scale(host_in_[i]);
      });
    }
    return check_result(y(), reference_, Tolerance{0, 0});  // exact: see scale()
  }

 private:
  const Variants& variants_;

  float* x() const { return in_.get() + misalign_; }
  float* y() const { return out_.get() + misalign_; }

  dim3 grid(GridShape shape) const {
    auto blocks_for = [](std::size_t threads) {
      return static_cast<unsigned>((std::max<std::size_t>(threads, 1) + kBlock - 1) / kBlock);
    };
    switch (shape) {
      case GridShape::one_per_element: return dim3(blocks_for(n_));
      case GridShape::one_per_vector: return dim3(blocks_for(n_ / 4));  // >= 256 threads: the tail fits
      case GridShape::full_wave: return dim3(wave_blocks_);
    }
    return dim3(1);
  }

  std::size_t n_;
  int misalign_;
  std::vector<float> host_in_;
  std::vector<float> reference_;  // computed on the first check
  DeviceBuffer<float> in_, out_;
  unsigned wave_blocks_ = 0;
};

std::unique_ptr<LabRun> setup_run(const Variants& variants, const ParamValues& params,
                                  std::uint64_t seed) {
  return std::make_unique<VectorizeRun>(variants, static_cast<std::size_t>(params.at("size")),
                                        static_cast<int>(params.at("misalign")), seed);
}

std::unique_ptr<Lab> make_lab() {
  LabSpec spec;
  spec.name = "vectorize";
  spec.topic = "vectorized (16-byte) global loads and stores, grid-stride loops";
  spec.summary = "y = 2x + 1 with float and float4 accesses: bytes in flight per thread";
  spec.teaching_point =
      "A perfectly coalesced kernel that moves one float per thread still misses the copy "
      "roof, because each thread has only 4 bytes in flight and DRAM latency needs far more "
      "outstanding. Loading a float4 per thread quadruples the bytes in flight and divides "
      "the memory instructions by four, which reaches the roof; a grid-stride loop over one "
      "wave of blocks keeps that and saves block scheduling. Vector accesses need 16-byte "
      "alignment, so check it and keep a scalar path for the tail and for misaligned data.";
  spec.params = {
      // Up to 2^30 floats: 4 GiB per buffer, 8 GiB of device memory and 12 GiB of host memory
      // (input, reference, the result read back), so a sweep reaches far past the L2.
      {"size", "elements (floats per buffer)", 1 << 28, 1, 1 << 30, true},
      {"misalign",
       "offset in floats of both buffers from their aligned start (1-3 force the "
       "float4 kernels onto their scalar fallback)",
       0, 0, 3, false},
  };
  return make_table_lab(std::move(spec), variant_table(), setup_run);
}

}  // namespace
}  // namespace gpulab::labs

GPULAB_REGISTER_LAB(gpulab::labs::make_lab)
