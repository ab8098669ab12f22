// Lab `constant-memory`: out[i] = a degree-31 polynomial in in[i], by Horner's rule, whose 32
// coefficients each thread takes from a window of a 256-entry table.
//
// Every element costs one 4-byte read, one 4-byte write, 32 table reads and 31 FMAs. The input
// and output stream at the copy roof in a few tens of microseconds (2^24 elements: 134 MB);
// what differs between the variants is only *where the table lives and which entries the 32
// lanes of a warp read at the same time*:
//   divergent-index  __constant__ table, lane-dependent window: 32 addresses per warp read
//   uniform-index    __constant__ table, warp-dependent window: 1 address per warp read
//   global-ldg       global table through the read-only L1 path, lane-dependent window
// The two constant-memory variants compile to the same instructions (32 LDC and 31 FFMA per
// element: same count, same order); only the addresses differ.
#include <algorithm>
#include <cmath>
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
constexpr unsigned kTable = 256;             // distinct coefficients
constexpr int kTaps = 32;                    // coefficients per element (polynomial degree + 1)
constexpr int kTableWords = kTable + kTaps;  // entries 256..287 repeat 0..31: a window never wraps

__constant__ float c_coefficients[kTableWords];

// ---- which window a thread reads: entries base .. base + 31 ----------------------------------

// Lane-dependent: thread t starts at 7t mod 256. The 32 lanes of a warp start 7 entries apart,
// so each table read of a warp asks for 32 different addresses.
struct LaneWindow {
  __host__ __device__ static unsigned base(unsigned tid) { return (tid * 7u) & (kTable - 1); }
};

// Warp-dependent: every lane of warp w starts at 7w mod 256, so each table read of a warp asks
// for one address. (Derived from threadIdx.x like LaneWindow, so that the compiler emits the
// same LDC instructions for both: only the addresses differ at run time.)
struct WarpWindow {
  __host__ __device__ static unsigned base(unsigned tid) {
    return ((tid >> 5) * 7u) & (kTable - 1);
  }
};

// ---- where the table lives -------------------------------------------------------------------

// The constant cache (per SM, fed from the constant bank in device memory) answers one address
// per access and broadcasts it to every lane that asked for it. A warp's LDC with 32 different
// addresses is split into 32 accesses, one after another; with one address it is a single
// access.
struct ConstantTable {
  __device__ static float at(const float* /*global table, unused*/, unsigned i) {
    // PROBLEM: a lane-dependent __constant__ index: one access per distinct address
    return c_coefficients[i];
  }
};

// The same table in global memory, read through the read-only data path (LDG.CONSTANT, cached
// in L1). The 1.1 KB table stays in every SM's L1 after the first touch; the L1 serves a
// warp's request in one pass per 128-byte line it touches, not per address.
struct GlobalTable {
  __device__ static float at(const float* __restrict__ table, unsigned i) {
    return __ldg(table + i);
  }
};

// ---- the kernel ------------------------------------------------------------------------------
// One thread per element, 256 per block. Napkin math for 2^24 elements (2^19 warps, 32 table
// reads each: 16.8 M warp-level table reads, ~127,000 per SM):
//  * uniform-index (WarpWindow, ConstantTable): one constant-cache access per warp read,
//    ~127,000 accesses per SM, ~64 us if the cache answers one access per clock; 31 FFMAs per
//    element are ~16 us of FMA throughput, the 134 MB of streaming ~32 us. Tens of microseconds.
//  * divergent-index (LaneWindow, ConstantTable): 32 accesses per warp read, ~4 million per SM:
//    ~2 ms at one per clock. The instructions are the same as uniform-index; each LDC simply
//    takes 32 times as long, and the warps wait on it.
//  * global-ldg (LaneWindow, GlobalTable): a warp's 32 entries, 28 bytes apart, span ~870 bytes:
//    7 or 8 cache lines, so ~8 L1 passes per warp read instead of 32. Faster than
//    divergent-index by roughly that ratio, slower than a broadcast.
template <typename Window, typename Table>
__global__ void __launch_bounds__(kBlock)
    evaluate_polynomial(const float* __restrict__ in, float* __restrict__ out,
                        const float* __restrict__ table, size_t n) {
  const size_t i = static_cast<size_t>(blockIdx.x) * kBlock + threadIdx.x;
  if (i >= n) return;
  const float x = in[i];
  const unsigned base = Window::base(threadIdx.x);
  float acc = Table::at(table, base);
#pragma unroll
  for (int k = 1; k < kTaps; ++k) acc = __fmaf_rn(acc, x, Table::at(table, base + k));
  out[i] = acc;
}

// ---- the lab ----------------------------------------------------------------------------------

using PolyKernel = void (*)(const float*, float*, const float*, size_t);
using WindowBase = unsigned (*)(unsigned);

struct ConstantVariant {
  VariantSpec spec;
  const char* kernel_name;
  PolyKernel kernel;
  WindowBase window;  // host copy of the kernel's window, for the CPU reference
};
using Variants = VariantTable<ConstantVariant>;

std::vector<ConstantVariant> variant_table() {
  return {
      {{"divergent-index", Role::baseline,
        "__constant__ table, each lane reads a different entry: 32 serialized accesses per read",
        ""},
       "evaluate_constant_divergent",
       evaluate_polynomial<LaneWindow, ConstantTable>,
       LaneWindow::base},
      {{"uniform-index", Role::optimized,
        "__constant__ table, all lanes of a warp read the same entry: one broadcast per read", ""},
       "evaluate_constant_uniform",
       evaluate_polynomial<WarpWindow, ConstantTable>,
       WarpWindow::base},
      {{"global-ldg", Role::optimized,
        "the same lane-dependent reads from a global table through the read-only L1 path", ""},
       "evaluate_global_ldg",
       evaluate_polynomial<LaneWindow, GlobalTable>,
       LaneWindow::base},
  };
}

class ConstantMemoryRun final : public LabRun {
 public:
  ConstantMemoryRun(const Variants& variants, size_t n, std::uint64_t seed)
      : variants_(variants), n_(n), host_in_(n), host_table_(kTableWords) {
    require_device_memory(2 * n * sizeof(float) + kTableWords * sizeof(float),
                          "constant-memory at this size");
    in_ = DeviceBuffer<float>(n);
    out_ = DeviceBuffer<float>(n);
    table_ = DeviceBuffer<float>(kTableWords);
    fill_uniform(host_in_, seed);
    std::vector<float> coefficients(kTable);
    fill_uniform(coefficients, stream_seed(seed, 1));
    for (int k = 0; k < kTableWords; ++k) host_table_[k] = coefficients[k % kTable];
    GPULAB_CUDA_CHECK(cudaMemcpy(in_.get(), host_in_.data(), in_.bytes(), cudaMemcpyHostToDevice));
    GPULAB_CUDA_CHECK(
        cudaMemcpy(table_.get(), host_table_.data(), table_.bytes(), cudaMemcpyHostToDevice));
    upload_constant_table(nullptr);
    // Pageable copies may still be in flight when cudaMemcpy returns; the harness launches on
    // a non-blocking stream, which does not wait for them.
    GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
  }

  ~ConstantMemoryRun() override {
    if (table_owner() == this) table_owner() = nullptr;
  }
  ConstantMemoryRun(const ConstantMemoryRun&) = delete;
  ConstantMemoryRun& operator=(const ConstantMemoryRun&) = delete;

  report::WorkModel work() const override {
    // The table is 1.1 KB, read from caches: not counted. One FMA (2 flops) per tap after the
    // first.
    const double bytes = static_cast<double>(n_) * sizeof(float);
    return {bytes, bytes, 2.0 * (kTaps - 1) * static_cast<double>(n_)};
  }

  std::vector<KernelLaunch> kernels(const std::string& variant) const override {
    const auto& v = variants_[variant];
    return {{v.kernel_name, reinterpret_cast<const void*>(v.kernel), grid(), dim3(kBlock), 0}};
  }

  void launch(const std::string& variant, cudaStream_t stream) override {
    const auto& v = variants_[variant];
    if (table_owner() != this) upload_constant_table(stream);  // another run set up since
    v.kernel<<<grid(), kBlock, 0, stream>>>(in_.get(), out_.get(), table_.get(), n_);
    GPULAB_CUDA_CHECK_LAUNCH();
  }

  void poison_outputs(cudaStream_t stream) override { poison(out_.get(), out_.bytes(), stream); }

  // The CPU evaluates the same polynomial with the same coefficients in the same order, with
  // fused multiply-adds rounded once like the GPU's FFMA: the results should be bit-identical.
  // The tolerance (1e-6 absolute and relative, for values of magnitude up to ~32) only leaves
  // room for a differently rounded FMA; a wrong coefficient or a wrong window is off by ~0.1.
  report::Check check(const std::string& variant) override {
    const auto& v = variants_[variant];
    auto& reference = references_[v.window];
    if (reference.empty()) {
      reference.resize(n_);
      parallel_for(n_, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
          const unsigned base = v.window(static_cast<unsigned>(i % kBlock));
          const float x = host_in_[i];
          float acc = host_table_[base];
          for (int k = 1; k < kTaps; ++k) acc = std::fma(acc, x, host_table_[base + k]);
          reference[i] = acc;
        }
      });
    }
    return check_result(out_.get(), reference, Tolerance{1e-6, 1e-6});
  }

 private:
  const Variants& variants_;

  // There is one __constant__ table per process: the run that wrote it last owns it.
  static const ConstantMemoryRun*& table_owner() {
    static const ConstantMemoryRun* owner = nullptr;
    return owner;
  }
  void upload_constant_table(cudaStream_t stream) {
    GPULAB_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_coefficients, host_table_.data(),
                                              kTableWords * sizeof(float), 0,
                                              cudaMemcpyHostToDevice, stream));
    table_owner() = this;
  }

  dim3 grid() const { return dim3(static_cast<unsigned>((n_ + kBlock - 1) / kBlock)); }

  size_t n_;
  std::vector<float> host_in_;
  std::vector<float> host_table_;
  std::map<WindowBase, std::vector<float>> references_;  // one per window, on first check
  DeviceBuffer<float> in_, out_, table_;
};

std::unique_ptr<LabRun> setup_run(const Variants& variants, const ParamValues& params,
                                  std::uint64_t seed) {
  return std::make_unique<ConstantMemoryRun>(variants, static_cast<size_t>(params.at("n")), seed);
}

std::unique_ptr<Lab> make_lab() {
  LabSpec spec;
  spec.name = "constant-memory";
  spec.topic = "constant cache broadcast and serialization, read-only data path";
  spec.summary =
      "polynomial with table coefficients: constant memory only pays off as a broadcast";
  spec.teaching_point =
      "The constant cache answers one address per access and hands it to every lane that "
      "asked for it, so a table read costs one access when a warp's lanes agree on the entry "
      "and 32 accesses, one after another, when they all want different ones. Coefficients "
      "that every thread reads at the same moment (filter taps, parameters) belong in "
      "__constant__; a table indexed by lane belongs in global memory read through the "
      "read-only path, where L1 serves a warp in one pass per cache line touched.";
  spec.params = {
      {"n", "number of elements", std::int64_t{1} << 24, 1, std::int64_t{1} << 28, true},
  };
  return make_table_lab(std::move(spec), variant_table(), setup_run);
}

}  // namespace
}  // namespace gpulab::labs

GPULAB_REGISTER_LAB(gpulab::labs::make_lab)
