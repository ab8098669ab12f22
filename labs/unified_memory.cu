// Lab `unified-memory`: a kernel reads data that the CPU wrote, and that the CPU reads again
// between GPU passes.
//
// The computation: y[i] = 0.5 x[i] + 0.25 (one fused multiply-add), over `size` floats (2^26,
// 256 MiB, by default). The input lives in host memory when each launch begins: written by the
// CPU at setup, read by the CPU again before every launch (prepare()). The variants differ in
// how the input reaches the GPU:
//   on-demand           managed memory, no hints: the kernel faults, the driver migrates pages
//   prefetch            managed memory, cudaMemPrefetchAsync to the GPU before the kernel
//   advise-read-mostly  managed memory marked read-mostly: both sides keep a read-only copy
//   explicit            a pinned host buffer copied with cudaMemcpyAsync into device memory
// The output is plain device memory in every variant.
//
// Napkin math (the H200; its measured timelines are in tests/fixtures/labs/unified-memory.json):
//  - The kernel alone: 256 MiB read + 256 MiB written at ~4.2 TB/s is ~0.13 ms (docs/cards.md
//    has what a prefetched run measured).
//  - Moving the input over the link: 256 MiB at 52 GB/s (pinned copy) is ~5.2 ms; a prefetch
//    moves the same bytes in large pieces, at a similar rate.
//  - On demand, the kernel itself stalls: a warp that touches a page the GPU does not hold
//    faults, the driver collects a batch of faults, migrates those pages (and some around them)
//    and replays the accesses, a batch at a time: far slower than the bulk copy, let alone the
//    kernel after a prefetch (docs/cards.md).
//  - Read-mostly: the first pass duplicates the pages on the GPU (on demand); CPU reads leave
//    both copies valid, so every later pass reads the GPU copy and moves nothing: ~0.18 ms.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "labs/harness/check.hpp"
#include "labs/harness/cuda_check.hpp"
#include "labs/harness/device_buffer.hpp"
#include "labs/harness/harness.hpp"
#include "labs/harness/parallel_for.hpp"
#include "labs/harness/random.hpp"
#include "labs/harness/registry.hpp"
#include "labs/harness/table_lab.hpp"

namespace gpulab::labs {
namespace {

constexpr int kBlock = 256;
constexpr float kScale = 0.5f;
constexpr float kShift = 0.25f;
constexpr std::size_t kPageFloats = 4096 / sizeof(float);  // floats in a 4 KiB host page

__host__ __device__ inline float transform(float x) {
  return fmaf(x, kScale, kShift);  // rounds once on both sides: the reference matches exactly
}

// ---- the kernel ---------------------------------------------------------------------------------
// One element per thread, 256-thread blocks: a streaming read and write, 8 bytes per element,
// ~0.13 ms over 256 MiB when the data is in device memory. Where it is not, the same loads wait
// for page faults instead of DRAM, and the kernel takes as long as the migration.
__global__ void scale_shift(const float* __restrict__ x, float* __restrict__ y, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = transform(x[i]);
}

// ---- the variants -------------------------------------------------------------------------------

// Where a variant's kernel reads its input from, and what it does before the kernel.
enum class Source {
  on_demand,    // its own managed buffer, no hints
  prefetched,   // its own managed buffer, prefetched to the GPU in every launch
  read_mostly,  // its own managed buffer, advised read-mostly at setup
  copied,       // a pinned buffer copied into device memory in every launch
};

// Each managed variant has a buffer of its own: advice sticks to the pages, and pages a
// variant left on the GPU would change what the next variant measures.
constexpr int kManagedBuffers = 3;
int managed_index(Source s) {
  return s == Source::on_demand ? 0 : s == Source::prefetched ? 1 : 2;
}

struct UnifiedMemoryVariant {
  VariantSpec spec;
  Source source;
};
using Variants = VariantTable<UnifiedMemoryVariant>;

std::vector<UnifiedMemoryVariant> variant_table() {
  return {
      {{"on-demand", Role::baseline,
        "the kernel reads managed memory the CPU holds: every page arrives through a GPU page "
        "fault, in small pieces, while the kernel waits",
        "um-page-faults"},
       Source::on_demand},
      {{"prefetch", Role::optimized,
        "cudaMemPrefetchAsync moves the managed input to the GPU in bulk, then the kernel reads "
        "device-resident pages",
        "host-device-transfers"},
       Source::prefetched},
      {{"advise-read-mostly", Role::optimized,
        "managed input advised read-mostly: the first pass duplicates it on the GPU, and since "
        "the CPU only reads it, later passes move nothing",
        ""},
       Source::read_mostly},
      {{"explicit", Role::optimized,
        "cudaMemcpyAsync from a pinned host buffer into a device buffer, then the kernel: the "
        "classic way, and the yardstick for the others",
        "host-device-transfers"},
       Source::copied},
  };
}

class UnifiedMemoryRun final : public LabRun {
 public:
  UnifiedMemoryRun(const Variants& variants, std::size_t n, std::uint64_t seed)
      : variants_(variants), n_(n), host_x_(n) {
    // The three managed inputs may all end up in device memory, besides the explicit
    // variant's device input and the output.
    require_device_memory((kManagedBuffers + 2) * n_ * sizeof(float),
                          "unified-memory at this size");
    GPULAB_CUDA_CHECK(cudaGetDevice(&device_));
    int concurrent = 0;
    GPULAB_CUDA_CHECK(
        cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, device_));
    concurrent_managed_access_ = concurrent != 0;

    fill_uniform(host_x_, seed);
    // The CPU writes every input: managed pages are first touched, and so placed, on the host.
    for (auto& buffer : managed_) {
      buffer = ManagedBuffer<float>(n_);
      std::memcpy(buffer.get(), host_x_.data(), buffer.bytes());
    }
    pinned_x_ = PinnedBuffer<float>(n_);
    std::memcpy(pinned_x_.get(), host_x_.data(), pinned_x_.bytes());
    device_x_ = DeviceBuffer<float>(n_);
    y_ = DeviceBuffer<float>(n_);

    // Read-mostly: a processor that reads a page gets a read-only copy of its own, and the
    // other copies stay valid until someone writes. (The location argument is ignored for
    // this advice; the device is given for clarity.) Only where the GPU can fault on managed
    // memory while the CPU uses it, which the managed variants need anyway (skip_reason).
    if (concurrent_managed_access_) {
      GPULAB_CUDA_CHECK(cudaMemAdvise(managed_buffer(Source::read_mostly), n_ * sizeof(float),
                                      cudaMemAdviseSetReadMostly, device_location()));
    }
  }

  // One float read and one written per element; one FMA (2 flops) each.
  report::WorkModel work() const override {
    const double bytes = static_cast<double>(n_) * sizeof(float);
    return {bytes, bytes, 2.0 * static_cast<double>(n_)};
  }

  // Prefetching and read-duplication need a GPU that can fault on managed memory while the
  // CPU uses it; without it the driver moves all managed memory at every launch and the
  // on-demand variant would not fault either.
  std::optional<std::string> skip_reason(const std::string& variant) const override {
    if (variants_[variant].source != Source::copied && !concurrent_managed_access_)
      return std::string(
          "this device cannot fault on managed memory while the CPU uses it "
          "(cudaDevAttrConcurrentManagedAccess = 0): no page faults, prefetches or "
          "read-mostly copies to show");
    return std::nullopt;
  }

  std::vector<KernelLaunch> kernels(const std::string& variant) const override {
    (void)variants_[variant];
    return {{"scale_shift", reinterpret_cast<const void*>(scale_shift), grid(), dim3(kBlock), 0}};
  }

  void launch(const std::string& variant, cudaStream_t stream) override {
    const auto source = variants_[variant].source;
    const float* x = nullptr;
    switch (source) {
      case Source::on_demand:
      case Source::read_mostly:
        x = managed_buffer(source);
        break;
      case Source::prefetched:
        x = managed_buffer(source);
        // In the stream, before the kernel: the kernel starts once every page is on the GPU.
        GPULAB_CUDA_CHECK(
            cudaMemPrefetchAsync(x, n_ * sizeof(float), device_location(), 0, stream));
        break;
      case Source::copied:
        x = device_x_.get();
        GPULAB_CUDA_CHECK(cudaMemcpyAsync(device_x_.get(), pinned_x_.get(), n_ * sizeof(float),
                                          cudaMemcpyHostToDevice, stream));
        break;
    }
    scale_shift<<<grid(), kBlock, 0, stream>>>(x, y_.get(), n_);
    GPULAB_CUDA_CHECK_LAUNCH();
  }

  // Every launch must start with the input where a program that produces or inspects it on
  // the CPU would have it: so the CPU reads each page of the variant's input here, outside
  // timing, as such a program's host code would between two GPU passes.
  //  - on-demand, prefetch: a page the GPU holds moves back to host memory when the CPU
  //    touches it, so the next launch finds the whole input on the host again and faults (or
  //    prefetches) all of it, every time, not only the first time.
  //  - advise-read-mostly: the CPU reads its own copy and the GPU keeps its duplicate; that
  //    nothing moves in later launches is the point of the advice.
  //  - explicit: the CPU reads its pinned buffer; nothing moves, as the copy is in the launch.
  // One float per 4 KiB page is enough to fault a page in; the values are folded into a
  // member so that the reads are not optimized away. The GPU must be done with the buffer
  // first (a CPU access to a managed page the GPU is using would wait or fault anyway).
  void prepare(const std::string& variant) override {
    const auto source = variants_[variant].source;
    GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
    const float* data = source == Source::copied ? pinned_x_.get() : managed_buffer(source);
    const std::size_t pages = (n_ + kPageFloats - 1) / kPageFloats;
    std::atomic<std::uint32_t> folded{0};
    parallel_for(pages, [data, &folded](std::size_t begin, std::size_t end) {
      std::uint32_t bits = 0;
      for (std::size_t p = begin; p < end; ++p) {
        std::uint32_t word;
        std::memcpy(&word, data + p * kPageFloats, sizeof word);
        bits ^= word;
      }
      folded.fetch_xor(bits, std::memory_order_relaxed);
    });
    host_reads_ ^= folded.load(std::memory_order_relaxed);
  }

  void poison_outputs(cudaStream_t stream) override { poison(y_.get(), y_.bytes(), stream); }

  report::Check check(const std::string& variant) override {
    (void)variants_[variant];
    return check_result(y_.get(), reference(), Tolerance{0, 0});
  }

 private:
  const Variants& variants_;

  dim3 grid() const { return dim3(static_cast<unsigned>((n_ + kBlock - 1) / kBlock)); }

  cudaMemLocation device_location() const {
    cudaMemLocation location{};
    location.type = cudaMemLocationTypeDevice;
    location.id = device_;
    return location;
  }

  float* managed_buffer(Source source) const { return managed_[managed_index(source)].get(); }

  // Computed on the first check.
  const std::vector<float>& reference() {
    if (reference_.empty()) {
      reference_.resize(n_);
      parallel_for(n_, [this](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) reference_[i] = transform(host_x_[i]);
      });
    }
    return reference_;
  }

  std::size_t n_;
  int device_ = 0;
  bool concurrent_managed_access_ = false;
  std::vector<float> host_x_;
  ManagedBuffer<float> managed_[kManagedBuffers];  // on-demand, prefetch, advise-read-mostly
  PinnedBuffer<float> pinned_x_;                   // explicit's host input
  DeviceBuffer<float> device_x_;                   // explicit's device input
  DeviceBuffer<float> y_;
  std::uint32_t host_reads_ = 0;  // what prepare() read, folded
  std::vector<float> reference_;
};

std::unique_ptr<LabRun> setup_run(const Variants& variants, const ParamValues& params,
                                  std::uint64_t seed) {
  return std::make_unique<UnifiedMemoryRun>(variants, static_cast<std::size_t>(params.at("size")),
                                            seed);
}

std::unique_ptr<Lab> make_lab() {
  LabSpec spec;
  spec.name = "unified-memory";
  spec.topic = "unified memory: page faults, prefetching, memory advice, explicit copies";
  spec.summary =
      "a kernel over data the CPU holds: on-demand faults, prefetch, read-mostly, explicit copy";
  spec.teaching_point =
      "Managed memory gives the CPU and the GPU one pointer, not one copy: when a kernel "
      "touches pages that live on the host, it stalls on page faults while the driver moves "
      "the data over in small batches, many times slower than a bulk copy. A prefetch moves "
      "the same bytes in large pieces before the kernel starts, and read-mostly advice keeps "
      "a copy on each side as long as nobody writes, so later passes move nothing. An "
      "explicit copy from pinned memory is the yardstick all three should be measured "
      "against.";
  spec.params = {
      // At most 2^27 floats: the three managed inputs stay within 1.5 GiB.
      {"size", "floats read by the kernel (and written)", 1 << 26, 1, 1 << 27, true},
  };
  spec.traced = true;
  spec.default_warmup = 1;  // an on-demand launch takes ~70 ms, and prepare() as much again
  spec.default_repeat = 10;
  return make_table_lab(std::move(spec), variant_table(), setup_run);
}

}  // namespace
}  // namespace gpulab::labs

GPULAB_REGISTER_LAB(gpulab::labs::make_lab)
