// Lab `coalescing`: y[i] = x[source(i)], a copy whose only difference between variants is which
// input element thread i reads.
//
// Global memory is served in 32-byte sectors. When the 32 threads of a warp read 32 neighbouring
// floats, their 128 bytes fill exactly 4 sectors and every byte fetched is used. The variants
// below keep the output write coalesced and change only the read address: spread out (one
// sector per useful float), shifted by one element (5 sectors instead of 4), or contiguous.
//
// Every variant uses the same launch: 256-thread blocks, each thread copying 4 elements that
// lie one block-width apart, so that each warp instruction still covers 32 consecutive outputs
// while each thread has 4 independent loads in flight. One load per thread leaves too few bytes
// in flight to cover DRAM latency on the H200 (a one-float-per-thread copy stays well short of
// the copy roof: docs/cards.md); four per thread is what a float4 copy keeps in flight.
//
// Default size: 2^26 elements, 268 MB read + 268 MB written by the contiguous copy, ~0.13 ms at
// the copy roof. The strided input is `stride` times larger (2.1 GB at the default stride of 8):
// it is what bounds size x stride.
#include <cstdint>
#include <map>
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
constexpr int kItemsPerThread = 4;
constexpr int kItemsPerBlock = kBlock * kItemsPerThread;
constexpr std::size_t kMaxInputBytes = std::size_t{4} << 30;  // the strided input, at most 4 GiB

// ---- where thread i reads ---------------------------------------------------------------------
// Each policy maps output index i to the input index it copies. They are __host__ __device__:
// the CPU reference uses the same mapping, which is the definition of the variant.

// x[i * stride]. At the default stride of 8 floats, consecutive lanes read floats 32 bytes
// apart: each lane needs a sector of its own, 32 sectors per request instead of 4, and uses 4 of
// the 32 bytes fetched. DRAM reads every sector whole: 8x the model's bytes (the lanes' sectors
// are adjacent, so the H200's 64-byte DRAM fetches waste nothing more). Read 8x + write 1x
// against 1x + 1x: the kernel is DRAM-bound on bytes it throws away, ~4.5x slower than the
// contiguous copy. Strides above 8 cost more at DRAM, not in sectors per request: at stride 32
// each float sits alone in a 64-byte fetch, 16x the model.
struct StridedIndex {
  __host__ __device__ static std::size_t source(std::size_t i, int stride) {
    return i * static_cast<std::size_t>(stride);
  }
};

// x[i + 1]. Contiguous but 4 bytes past the sector grid: a warp's 128 bytes straddle 5 sectors
// instead of 4, so L1 and L2 move 25% more sectors. The fifth sector is the first of the next
// warp's, so DRAM still reads each byte once and the kernel runs close to the contiguous one:
// misalignment by itself costs little on a modern GPU.
struct ShiftedIndex {
  __host__ __device__ static std::size_t source(std::size_t i, int /*stride*/) { return i + 1; }
};

// x[i]. 32 lanes read 128 aligned bytes: 4 sectors per request, every byte used, DRAM reads the
// model's bytes once. With 4 loads in flight per thread it should run at the copy roof.
struct ContiguousIndex {
  __host__ __device__ static std::size_t source(std::size_t i, int /*stride*/) { return i; }
};

template <typename Index>
__global__ void gather_copy(const float* __restrict__ x, float* __restrict__ y, std::size_t n,
                            int stride) {
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(kItemsPerBlock) + threadIdx.x;
  float v[kItemsPerThread] = {};
  // All loads first, then all stores: the four loads are in flight together.
#pragma unroll
  for (int k = 0; k < kItemsPerThread; ++k) {
    const std::size_t i = first + static_cast<std::size_t>(k) * kBlock;
    // PROBLEM: the strided read: each lane's word in a sector of its own
    if (i < n) v[k] = x[Index::source(i, stride)];
  }
#pragma unroll
  for (int k = 0; k < kItemsPerThread; ++k) {
    const std::size_t i = first + static_cast<std::size_t>(k) * kBlock;
    if (i < n) y[i] = v[k];
  }
}

// ---- the lab ----------------------------------------------------------------------------------

using KernelFn = void (*)(const float*, float*, std::size_t, int);
using SourceFn = std::size_t (*)(std::size_t, int);

struct CoalescingVariant {
  VariantSpec spec;
  const char* kernel_name;
  KernelFn kernel;
  SourceFn source;  // host copy of the kernel's index mapping, for the reference
};
using Variants = VariantTable<CoalescingVariant>;

std::vector<CoalescingVariant> variant_table() {
  return {
      {{"strided", Role::baseline,
        "thread i reads x[i*stride]: one sector per useful float, 32 sectors per request",
        "uncoalesced-global"},
       "gather_copy_strided", gather_copy<StridedIndex>, &StridedIndex::source},
      {{"offset", Role::optimized,
        "thread i reads x[i+1]: contiguous but 4 bytes off the sector grid, 5 sectors per request",
        "memory-bound-at-roof"},
       "gather_copy_offset", gather_copy<ShiftedIndex>, &ShiftedIndex::source},
      {{"contiguous", Role::optimized, "thread i reads x[i]: 4 sectors per request, the ideal",
        "memory-bound-at-roof"},
       "gather_copy_contiguous", gather_copy<ContiguousIndex>, &ContiguousIndex::source},
  };
}

// Input elements: the strided read reaches x[(n-1)*stride], the shifted one x[n].
std::size_t input_elements(std::size_t n, int stride) {
  return n * static_cast<std::size_t>(stride) + 1;
}

class CoalescingRun final : public LabRun {
 public:
  CoalescingRun(const Variants& variants, std::size_t n, int stride, std::uint64_t seed)
      : variants_(variants), n_(n), stride_(stride), host_in_(input_elements(n, stride)) {
    require_device_memory((host_in_.size() + n_) * sizeof(float), "coalescing at this size");
    in_ = DeviceBuffer<float>(host_in_.size());
    out_ = DeviceBuffer<float>(n_);
    fill_uniform(host_in_, seed);
    GPULAB_CUDA_CHECK(cudaMemcpy(in_.get(), host_in_.data(), in_.bytes(), cudaMemcpyHostToDevice));
  }

  // The useful bytes: n floats read, n written. Whatever the strided read fetches beyond that
  // is waste, and shows as DRAM read / model > 1.
  report::WorkModel work() const override {
    const double bytes = static_cast<double>(n_) * sizeof(float);
    return {bytes, bytes, 0.0};
  }

  std::vector<KernelLaunch> kernels(const std::string& variant) const override {
    const auto& v = variants_[variant];
    return {{v.kernel_name, reinterpret_cast<const void*>(v.kernel), grid(), dim3(kBlock), 0}};
  }

  void launch(const std::string& variant, cudaStream_t stream) override {
    const auto& v = variants_[variant];
    v.kernel<<<grid(), kBlock, 0, stream>>>(in_.get(), out_.get(), n_, stride_);
    GPULAB_CUDA_CHECK_LAUNCH();
  }

  void poison_outputs(cudaStream_t stream) override { poison(out_.get(), out_.bytes(), stream); }

  // Each variant copies different input elements, so each has its own reference: the input
  // gathered on the CPU with the variant's index mapping. A copy: compared exactly.
  report::Check check(const std::string& variant) override {
    const auto& v = variants_[variant];
    auto& ref = references_[v.spec.name];
    if (ref.empty()) {
      ref.resize(n_);
      parallel_for(n_, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) ref[i] = host_in_[v.source(i, stride_)];
      });
    }
    return check_result(out_.get(), ref, Tolerance{0, 0});
  }

 private:
  const Variants& variants_;

  dim3 grid() const {
    return dim3(static_cast<unsigned>((n_ + kItemsPerBlock - 1) / kItemsPerBlock));
  }

  std::size_t n_;
  int stride_;
  std::vector<float> host_in_;
  std::map<std::string, std::vector<float>> references_;  // per variant, on its first check
  DeviceBuffer<float> in_, out_;
};

// The strided input is `stride` times the output: the two parameters' ranges allow more than a
// device should be asked for, so their product is bounded (a sweep checks every point with it
// before its first launch).
void check_input_size(const ParamValues& params) {
  const auto n = static_cast<std::size_t>(params.at("size"));
  const auto stride = static_cast<int>(params.at("stride"));
  const std::size_t input_bytes = input_elements(n, stride) * sizeof(float);
  // The strided reads' span is what the limit bounds, not the shifted read's one element past it
  // (stride 16 at the default size spans exactly 4 GiB).
  const std::size_t strided_span_bytes = n * static_cast<std::size_t>(stride) * sizeof(float);
  if (strided_span_bytes > kMaxInputBytes) {
    throw UsageError(fmt::format(
        "coalescing: size x stride = {} x {} needs a {:.2f} GB strided input; the limit is "
        "{:.2f} GB (lower size or stride)",
        n, stride, input_bytes / 1e9, kMaxInputBytes / 1e9));
  }
}

std::unique_ptr<LabRun> setup_run(const Variants& variants, const ParamValues& params,
                                  std::uint64_t seed) {
  check_input_size(params);
  return std::make_unique<CoalescingRun>(variants, static_cast<std::size_t>(params.at("size")),
                                         static_cast<int>(params.at("stride")), seed);
}

std::unique_ptr<Lab> make_lab() {
  LabSpec spec;
  spec.name = "coalescing";
  spec.topic = "global memory coalescing, sectors per request";
  spec.summary = "copy with strided, shifted and contiguous reads: what a warp's addresses cost";
  spec.teaching_point =
      "A warp's load is served in 32-byte sectors, so what matters is how many sectors its 32 "
      "addresses touch. Strided reads give every thread a sector of its own and DRAM fetches "
      "8 times the bytes the copy uses (16 at wider strides); contiguous reads need 4 sectors "
      "per warp and run at the copy roof. A shift by one element costs a fifth sector per warp "
      "but almost no time, because the neighbouring warp uses the rest of it.";
  spec.params = {
      {"size", "elements copied (output floats)", 1 << 26, 1, 1 << 28, true},
      {"stride", "floats between the reads of neighbouring threads in the strided variant", 8,
       1, 64, false},
  };
  spec.check_params = check_input_size;
  return make_table_lab(std::move(spec), variant_table(), setup_run);
}

}  // namespace
}  // namespace gpulab::labs

GPULAB_REGISTER_LAB(gpulab::labs::make_lab)
