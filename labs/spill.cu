// Lab `spill`: where a thread's values live when they are not in registers.
//
// Registers are named by instructions, not addressed: a value can live in one only if the
// compiler knows at compile time which register holds it. Two things push values out of the
// register file into local memory, a per-thread slice of device memory that is reached through
// L1 and L2 like global memory:
//
//   1. an array indexed with a value known only at run time gets a stack frame (ptxas -v:
//      "bytes stack frame", with 0 spill stores: it is not a spill), and every access to it is a
//      local load or store;
//   2. more live values than the registers a thread may use: ptxas spills the excess
//      ("bytes spill stores / loads") and reloads it where it is needed.
//
// The lab has two pairs of variants, each computing its own thing:
//
//   local-array / registers  smooth a per-thread array of 32 floats (16 passes of
//                            a[j] += 0.25 (a[j+1] - a[j])), then sum it. The two kernels are
//                            the same template; only whether the loop bound is a run-time
//                            value or a compile-time constant differs.
//   capped / uncapped        a bank of 64 running recurrences per thread (16 rounds of
//                            acc[k] = acc[k] x + d_k), then their sum. Same body; the capped
//                            kernel may use at most 32 registers (__maxnreg__, CUDA 12.4+).
//
// Local memory is laid out so that the 32 lanes' copies of one value are adjacent: a warp's
// local access is one coalesced 128-byte request. It is not slow because it is scattered; it
// is slow because every access is a memory instruction through L1 (128 B per clock per SM) and,
// when the frames of all resident threads do not fit in L1, through L2.
//
// Default size: 2^22 threads. The arrays are 2^22 x 32 floats (537 MB) read once; the bank
// reads the first 4 of those rows (67 MB); each thread writes one float (17 MB).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
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

// The array pair.
constexpr int kLen = 32;        // floats in each thread's array
constexpr int kPasses = 16;     // smoothing passes over the array
constexpr float kRate = 0.25f;  // a[j] moves a quarter of the way to a[j+1] per pass

// The bank pair.
constexpr int kBank = 64;         // running values per thread
constexpr int kInputs = 4;        // inputs per thread, fed to the bank in turn
constexpr int kRounds = 16;       // rounds; each updates all 64 values once
constexpr int kRegisterCap = 32;  // registers per thread allowed to the capped kernel

// One smoothing step and one recurrence step, shared by the kernels and the CPU reference:
// fmaf rounds once on both, so the reference matches bit for bit.
__host__ __device__ inline float smooth_step(float here, float next) {
  return fmaf(kRate, next - here, here);
}
__host__ __device__ constexpr float bank_init(int k) { return 0.015625f * (k - 32); }
__host__ __device__ constexpr float bank_offset(int k) { return 0.5f + 0.03125f * k; }

// ---- local-array and registers: one template, two loop bounds --------------------------------
// Thread t owns a[j] = in[j*n + t], j < 32: for each j a warp reads 32 consecutive floats, one
// coalesced 128-byte request. The thread then runs 16 passes of a[j] = a[j] + 0.25 (a[j+1] - a[j])
// over j = 0..len-2 and writes the sum of the array. Per thread: 128 B read, 4 B written,
// 16 x 31 x 2 = 992 floating-point instructions.

// The loop bound arrives as a kernel argument, as it would in a routine that serves arrays of
// any length. The compiler cannot unroll the loop completely, so a[j] and a[j+1] have run-time
// indices and the whole array lives in a 128-byte stack frame, with no spills (the build's
// ptxas table says so, tests/unit/ptxas_table_test.cpp checks it). The compiler unrolls the loop by 4 and reuses a neighbour it just
// loaded: ~1.25 local loads and 1 local store per step, ~280 B of local traffic per pass, plus
// 128 B stored and 128 B reloaded around the passes: ~4.7 KB per thread against 132 B of
// global traffic, 35x. Local accesses are coalesced (4 sectors per warp request), but a warp
// issues ~1,000 of them; at one 128-byte L1 wavefront per clock per SM, the 993 warps each SM
// runs at 4M threads keep L1 busy for ~1M clocks, ~0.5 ms, before any miss. An SM's 2048
// resident threads hold 256 KB of frames, more than its L1, so part of it goes to L2 as well:
// several times slower than `registers`.
struct RunTimeLength {
  __device__ static int get(int len) { return len; }
};

// The same loop with the bound a compile-time constant: fully unrolled, every index is a
// constant and each a[j] is a register of its own: no stack frame (ptxas table).
// Per thread 132 B of DRAM traffic and ~1,000 FP32 instructions; at 4M threads that is 0.13 ms
// at the ~4.2 TB/s copy roof and ~0.13 ms of FP32 issue (132 SMs x 128 lanes x 1.98 GHz): the
// kernel runs at about the speed the DRAM allows, with no local traffic at all.
struct CompileTimeLength {
  __device__ static constexpr int get(int /*len*/) { return kLen; }
};

template <typename Length>
__global__ void smooth_array(const float* __restrict__ in, float* __restrict__ out, int n,
                             int len) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const int m = Length::get(len);
  float a[kLen];
#pragma unroll
  for (int j = 0; j < kLen; ++j) a[j] = in[static_cast<std::size_t>(j) * n + t];
#pragma unroll 1
  for (int p = 0; p < kPasses; ++p) {
#pragma unroll  // complete for a constant m; a run-time m is only unrolled by 4
    // PROBLEM: a run-time bound indexes a[] dynamically: the array lives in local memory
    for (int j = 0; j + 1 < m; ++j) a[j] = smooth_step(a[j], a[j + 1]);
  }
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < kLen; ++j) sum += a[j];
  out[t] = sum;
}

// ---- capped and uncapped: one body, with and without a register cap --------------------------
// Thread t reads x_q = in[q*n + t], q < 4 (4 coalesced loads), starts 64 values
// acc[k] = x_1 c_k + x_2, runs 16 rounds of acc[k] = acc[k] x + d_k with x cycling through the
// four inputs, and writes the sum of the 64 values. Per thread: 16 B read, 4 B written,
// 16 x 64 = 1,024 FFMA. All 64 values are live in every round: the loop over rounds is kept
// rolled (#pragma unroll 1), so each round is the same 64 FFMAs.
__device__ __forceinline__ void bank_body(const float* __restrict__ in, float* __restrict__ out,
                                          int n) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  float x0 = in[t];
  float x1 = in[static_cast<std::size_t>(n) + t];
  float x2 = in[2 * static_cast<std::size_t>(n) + t];
  float x3 = in[3 * static_cast<std::size_t>(n) + t];
  float acc[kBank];
#pragma unroll
  for (int k = 0; k < kBank; ++k) acc[k] = fmaf(x1, bank_init(k), x2);
#pragma unroll 1
  for (int r = 0; r < kRounds; ++r) {
#pragma unroll
    for (int k = 0; k < kBank; ++k) acc[k] = fmaf(acc[k], x0, bank_offset(k));
    const float first = x0;  // the next round uses the next input
    x0 = x1;
    x1 = x2;
    x2 = x3;
    x3 = first;
  }
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < kBank; ++k) sum += acc[k];
  out[t] = sum;
}

// At most 32 registers per thread: the 64 values, 4 inputs and a few addresses cannot fit.
// ptxas keeps a few of the values in registers and cycles the rest through a 280-byte stack
// frame: each round is 58 local loads and 58 local stores (464 B) around its 64 FFMAs, ~7.5 KB
// per thread over 16 rounds against 20 B of global traffic (the frame and spill sizes are
// ptxas's, from the build's ptxas table, in the report's kernel attributes). The cap buys full occupancy (64
// warps per SM instead of 24), but those warps wait on L1 and, as 2048 frames of 280 B (570 KB)
// overflow it, on L2: 116 local instructions per 64 FFMAs make the kernel many times slower.
// (Before CUDA 12.4 the same cap was spelled __launch_bounds__(256, 8): 8 resident blocks of 256
// threads leave 65536 / 2048 = 32 registers per thread.)
__global__ void __maxnreg__(kRegisterCap) bank_capped(const float* __restrict__ in,
                                                      float* __restrict__ out, int n, int) {
  bank_body(in, out, n);
}

// No cap: ptxas gives the thread the ~80 registers it needs (the exact count is in the ptxas
// table), all 64 values stay in registers, no local traffic. Three 256-thread blocks fit per SM
// (24 warps, 37.5% occupancy), but each warp has 64 independent FFMAs per round, enough to keep
// the FP32 pipes busy: ~1,300 instructions per thread (70 per round), 5.5 G thread-instructions
// at 4M threads, ~0.16 ms at the SMs' issue rate of 33 T thread-instructions/s. The 20 B per thread of DRAM traffic (84 MB) take 0.02 ms:
// compute-bound.
__global__ void bank_uncapped(const float* __restrict__ in, float* __restrict__ out, int n, int) {
  bank_body(in, out, n);
}

// ---- the lab ----------------------------------------------------------------------------------

// Every kernel takes (in, out, threads, array length); only the array kernels read the length.
using KernelFn = void (*)(const float*, float*, int, int);

enum class Computation { smoothing, bank };

struct SpillVariant {
  VariantSpec spec;
  const char* kernel_name;
  KernelFn kernel;
  Computation computation;  // which CPU reference and work model the variant has
};
using Variants = VariantTable<SpillVariant>;

std::vector<SpillVariant> variant_table() {
  return {
      {{"local-array", Role::baseline,
        "float[32] indexed in a loop whose bound is a run-time value: a 128-byte stack frame, "
        "every access a local load or store",
        "local-memory"},
       "smooth_array_runtime_length", smooth_array<RunTimeLength>, Computation::smoothing},
      {{"registers", Role::optimized,
        "the same loop with a compile-time bound, fully unrolled: the array lives in registers",
        ""},
       "smooth_array_unrolled", smooth_array<CompileTimeLength>, Computation::smoothing},
      {{"capped", Role::baseline,
        "64 live values per thread under __maxnreg__(32): most of them spilled to local memory "
        "every round",
        "local-memory"},
       "bank_capped", bank_capped, Computation::bank},
      {{"uncapped", Role::optimized,
        "the same 64-value kernel without a register cap: all 64 values in registers, no spills",
        ""},
       "bank_uncapped", bank_uncapped, Computation::bank},
  };
}

// The smoothing on the CPU: the operations of smooth_array, in its order.
void smoothing_reference(const std::vector<float>& in, std::vector<float>& out, std::size_t n) {
  parallel_for(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      float a[kLen];
      for (int j = 0; j < kLen; ++j) a[j] = in[j * n + t];
      for (int p = 0; p < kPasses; ++p)
        for (int j = 0; j + 1 < kLen; ++j) a[j] = smooth_step(a[j], a[j + 1]);
      float sum = 0.0f;
      for (int j = 0; j < kLen; ++j) sum += a[j];
      out[t] = sum;
    }
  });
}

// The bank on the CPU: the operations of bank_body, in its order.
void bank_reference(const std::vector<float>& in, std::vector<float>& out, std::size_t n) {
  parallel_for(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      float x[kInputs];
      for (int q = 0; q < kInputs; ++q) x[q] = in[q * n + t];
      float acc[kBank];
      for (int k = 0; k < kBank; ++k) acc[k] = fmaf(x[1], bank_init(k), x[2]);
      for (int r = 0; r < kRounds; ++r)
        for (int k = 0; k < kBank; ++k) acc[k] = fmaf(acc[k], x[r % kInputs], bank_offset(k));
      float sum = 0.0f;
      for (int k = 0; k < kBank; ++k) sum += acc[k];
      out[t] = sum;
    }
  });
}

class SpillRun final : public LabRun {
 public:
  SpillRun(const Variants& variants, std::size_t n, std::uint64_t seed)
      : variants_(variants), n_(n), host_in_(kLen * n) {
    require_device_memory((kLen + 1) * n_ * sizeof(float), "spill at this size");
    in_ = DeviceBuffer<float>(host_in_.size());
    out_ = DeviceBuffer<float>(n_);
    fill_uniform(host_in_, seed);
    GPULAB_CUDA_CHECK(cudaMemcpy(in_.get(), host_in_.data(), in_.bytes(), cudaMemcpyHostToDevice));
  }

  // The lab's model is the smoothing's: 32 floats read and 1 written per thread; per element
  // and pass a subtraction and a fused multiply-add, then 32 additions.
  report::WorkModel work() const override {
    const double n = static_cast<double>(n_);
    return {n * kLen * sizeof(float), n * sizeof(float),
            n * (3.0 * kPasses * (kLen - 1) + kLen)};
  }

  // The bank reads 4 floats per thread and does 64 FFMAs to start and per round, then 64 adds.
  std::optional<report::WorkModel> variant_work(const std::string& variant) const override {
    if (variants_[variant].computation != Computation::bank) return std::nullopt;
    const double n = static_cast<double>(n_);
    return report::WorkModel{n * kInputs * sizeof(float), n * sizeof(float),
                             n * (2.0 * kBank * (kRounds + 1) + kBank)};
  }

  std::vector<KernelLaunch> kernels(const std::string& variant) const override {
    const auto& v = variants_[variant];
    return {{v.kernel_name, reinterpret_cast<const void*>(v.kernel), grid(), dim3(kBlock), 0}};
  }

  void launch(const std::string& variant, cudaStream_t stream) override {
    const auto& v = variants_[variant];
    v.kernel<<<grid(), kBlock, 0, stream>>>(in_.get(), out_.get(), static_cast<int>(n_), kLen);
    GPULAB_CUDA_CHECK_LAUNCH();
  }

  void poison_outputs(cudaStream_t stream) override { poison(out_.get(), out_.bytes(), stream); }

  // The same float operations in the same order on both sides (fmaf rounds once on the CPU as
  // on the GPU, and nothing is reassociated): compared exactly.
  report::Check check(const std::string& variant) override {
    const auto& ref = reference(variants_[variant].computation);
    return check_result(out_.get(), ref, Tolerance{0, 0});
  }

 private:
  const Variants& variants_;

  dim3 grid() const { return dim3(static_cast<unsigned>((n_ + kBlock - 1) / kBlock)); }

  // Computed on the first check that needs it.
  const std::vector<float>& reference(Computation c) {
    auto& ref = c == Computation::smoothing ? smoothing_ref_ : bank_ref_;
    if (ref.empty()) {
      ref.resize(n_);
      if (c == Computation::smoothing) smoothing_reference(host_in_, ref, n_);
      else bank_reference(host_in_, ref, n_);
    }
    return ref;
  }

  std::size_t n_;
  std::vector<float> host_in_;  // kLen rows of n_ floats; the bank reads the first kInputs
  std::vector<float> smoothing_ref_, bank_ref_;
  DeviceBuffer<float> in_, out_;
};

std::unique_ptr<LabRun> setup_run(const Variants& variants, const ParamValues& params,
                                  std::uint64_t seed) {
  return std::make_unique<SpillRun>(variants, static_cast<std::size_t>(params.at("size")), seed);
}

std::unique_ptr<Lab> make_lab() {
  LabSpec spec;
  spec.name = "spill";
  spec.topic = "registers, local memory, stack frames and spills";
  spec.summary =
      "a per-thread array and a 64-value register bank: when values leave the register file";
  spec.teaching_point =
      "Registers are named by the instructions, so an array stays in them only if every index "
      "is a compile-time constant; a loop bound known only at run time sends the whole array "
      "to a stack frame in local memory, and each access becomes a load or store through L1 "
      "and L2. A register cap pushes values to the same place by another route: whatever does "
      "not fit under the cap is spilled and reloaded, and the occupancy the cap buys does not "
      "pay for that traffic. ptxas -v tells the two apart (stack frame versus spill stores); "
      "the local-memory counters show what either costs.";
  spec.params = {
      {"size", "threads: per-thread arrays of 32 floats, and 64-value banks", 1 << 22, 1,
       1 << 24, true},
  };
  return make_table_lab(std::move(spec), variant_table(), setup_run);
}

}  // namespace
}  // namespace gpulab::labs

GPULAB_REGISTER_LAB(gpulab::labs::make_lab)
