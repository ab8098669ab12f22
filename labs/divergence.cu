// Lab `divergence`: y[i] = f(x[i]), where f takes one of two long, different computations
// depending on the sign of x[i].
//
// A warp has one instruction stream for its 32 lanes. When a branch sends some lanes one way and
// the rest the other, the warp runs the two paths one after the other, each with the other
// lanes switched off: the paths' costs add up, and the counter of threads per executed
// instruction (smsp__thread_inst_executed_per_inst_executed.ratio) drops below 32.
//
// The two paths, ~128 instructions each, both pure FP32 arithmetic on registers:
//   x > 0   polynomial: 128 Horner steps v = v x + c_k (one dependent FFMA each);
//   x <= 0  damped rotation: 32 steps of (p, q) <- 0.9 R(p, q) + (x, 0) (3 FFMA + 1 FMUL each).
// Each element costs 4 bytes read and 4 written against ~128 instructions (~250 flops): at
// 2^25 elements, 268 MB of DRAM traffic (0.06 ms at the copy roof) against 4.3 G thread-
// instructions of one path (0.13 ms at the H200's 33 T thread-instructions/s). Issue, not
// memory, sets the time, and divergence decides how many instructions are issued.
//
// Every variant uses the same launch: one element per thread, 256-thread blocks.
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

constexpr int kPolySteps = 128;     // Horner steps of the positive path
constexpr int kRotationSteps = 32;  // rotation steps of the non-positive path
constexpr float kCos = 0.85980284f;  // 0.9 cos(0.3): a rotation by 0.3 rad, damped by 0.9
constexpr float kSin = 0.26596819f;  // 0.9 sin(0.3)

// The two paths, shared by the kernels and the CPU reference: fmaf rounds once on both and
// nothing is reassociated, so the reference matches bit for bit. Both stay bounded for
// |x| < 1: the polynomial's coefficients are at most 0.5 and its terms shrink as x^k; the
// rotation shrinks by 0.9 per step.
__host__ __device__ constexpr float poly_coefficient(int k) {
  return 0.0625f * static_cast<float>((k * 37) % 17 - 8);  // in [-0.5, 0.5], exact in float
}

__host__ __device__ inline float polynomial_path(float x) {
  float v = x;
#pragma unroll
  for (int k = 0; k < kPolySteps; ++k) v = fmaf(v, x, poly_coefficient(k));
  return v;
}

__host__ __device__ inline float rotation_path(float x) {
  float p = x, q = 0.5f;
#pragma unroll
  for (int k = 0; k < kRotationSteps; ++k) {
    const float next_p = fmaf(kCos, p, fmaf(-kSin, q, x));
    const float next_q = fmaf(kSin, p, kCos * q);
    p = next_p;
    q = next_q;
  }
  return p + q;
}

__host__ __device__ inline bool takes_polynomial(float x) { return x > 0.0f; }

// ---- how a thread chooses its path -------------------------------------------------------------

// An if/else on the element's sign. Both paths are ~128 instructions, far too long for the
// compiler to predicate: it emits a real branch (SASS: BSSY, a predicated BRA, BSYNC). On
// random data a warp almost never has all 32 signs alike (probability 2^-31), so every warp
// runs both paths: ~20 common instructions at 32 lanes, then ~128 at the ~16 positive lanes,
// then ~128 at the others. Threads per instruction: (20 x 32 + 256 x 16) / 276 ~ 17; warp
// instructions per warp: ~276, twice what one path needs. 2^25 elements: 290 M
// warp-instructions, ~0.28 ms at the H200's 1.05 T warp-instructions/s.
//
// On data partitioned by sign (variant `sorted`), the same code runs ~148 instructions per warp
// at 32 lanes: only the one warp that straddles the boundary diverges. ~0.15 ms.
struct BranchOnSign {
  __device__ static float eval(float x) {
    // PROBLEM: a data-dependent branch: a warp runs both paths
    if (takes_polynomial(x)) return polynomial_path(x);
    return rotation_path(x);
  }
};

// Both paths on every lane, then a select (SASS: no branch but the bounds check). All 32 lanes
// are active in every instruction (~32 threads per instruction), but every lane now does both
// paths: ~276 warp-instructions per warp, as many as the divergent branch issues. The counter
// recovers; the time does not. Computing both sides pays only when they are short, which is
// why the compiler predicates short if/else bodies itself. (When two paths differ only in
// their constants, selecting the constants and running one path is the branchless form that
// does save the work; these two paths differ in kind.)
struct SelectBoth {
  __device__ static float eval(float x) {
    const float polynomial = polynomial_path(x);
    const float rotation = rotation_path(x);
    return takes_polynomial(x) ? polynomial : rotation;
  }
};

template <typename Choice>
__global__ void evaluate(const float* __restrict__ x, float* __restrict__ y, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  y[i] = Choice::eval(x[i]);
}

// ---- the lab ----------------------------------------------------------------------------------

using KernelFn = void (*)(const float*, float*, std::size_t);

enum class Input { random, partitioned };  // the input as drawn, or partitioned by sign

struct DivergenceVariant {
  VariantSpec spec;
  const char* kernel_name;
  KernelFn kernel;
  Input input;  // which input it reads, and so which reference it is checked against
};
using Variants = VariantTable<DivergenceVariant>;

std::vector<DivergenceVariant> variant_table() {
  return {
      {{"divergent", Role::baseline,
        "if (x > 0) polynomial else rotation, on random signs: every warp runs both paths with "
        "half its lanes idle",
        "warp-divergence"},
       "evaluate_branch", evaluate<BranchOnSign>, Input::random},
      {{"branchless", Role::optimized,
        "both paths on every lane, then a select: all 32 lanes active, twice the work per lane",
        ""},
       "evaluate_select", evaluate<SelectBoth>, Input::random},
      {{"sorted", Role::optimized,
        "the same branch on the input partitioned by sign (on the host, at setup): each warp "
        "takes one path",
        ""},
       "evaluate_branch", evaluate<BranchOnSign>, Input::partitioned},
  };
}

class DivergenceRun final : public LabRun {
 public:
  DivergenceRun(const Variants& variants, std::size_t n, std::uint64_t seed)
      : variants_(variants), n_(n), host_x_(n) {
    require_device_memory(3 * n_ * sizeof(float), "divergence at this size");
    x_ = DeviceBuffer<float>(n_);
    partitioned_ = DeviceBuffer<float>(n_);
    y_ = DeviceBuffer<float>(n_);
    fill_uniform(host_x_, seed);  // [-1, 1): about half the signs positive, at random

    // The partitioned input: positive elements first, the others after, each group in its
    // original order. order_[i] is the index in x of the i-th partitioned element.
    order_.resize(n_);
    std::size_t next = 0;
    for (std::size_t i = 0; i < n_; ++i)
      if (takes_polynomial(host_x_[i])) order_[next++] = static_cast<std::uint32_t>(i);
    positives_ = next;
    for (std::size_t i = 0; i < n_; ++i)
      if (!takes_polynomial(host_x_[i])) order_[next++] = static_cast<std::uint32_t>(i);
    std::vector<float> host_partitioned(n_);
    for (std::size_t i = 0; i < n_; ++i) host_partitioned[i] = host_x_[order_[i]];

    GPULAB_CUDA_CHECK(cudaMemcpy(x_.get(), host_x_.data(), x_.bytes(), cudaMemcpyHostToDevice));
    GPULAB_CUDA_CHECK(cudaMemcpy(partitioned_.get(), host_partitioned.data(), partitioned_.bytes(),
                                 cudaMemcpyHostToDevice));
  }

  // One float read and one written per element, and the flops of the element's own path:
  // 128 FFMA (256 flops) for the polynomial, 32 x (3 FFMA + 1 FMUL) + 1 FADD (225) for the
  // rotation. The branchless variant does both; the model counts what the result needs.
  report::WorkModel work() const override {
    const double bytes = static_cast<double>(n_) * sizeof(float);
    const double polynomial_flops = 2.0 * kPolySteps;
    const double rotation_flops = 7.0 * kRotationSteps + 1.0;
    return {bytes, bytes,
            static_cast<double>(positives_) * polynomial_flops +
                static_cast<double>(n_ - positives_) * rotation_flops};
  }

  std::vector<KernelLaunch> kernels(const std::string& variant) const override {
    const auto& v = variants_[variant];
    return {{v.kernel_name, reinterpret_cast<const void*>(v.kernel), grid(), dim3(kBlock), 0}};
  }

  void launch(const std::string& variant, cudaStream_t stream) override {
    const auto& v = variants_[variant];
    const float* in = v.input == Input::random ? x_.get() : partitioned_.get();
    v.kernel<<<grid(), kBlock, 0, stream>>>(in, y_.get(), n_);
    GPULAB_CUDA_CHECK_LAUNCH();
  }

  void poison_outputs(cudaStream_t stream) override { poison(y_.get(), y_.bytes(), stream); }

  // The reference of the random input is f(x[i]); that of the partitioned input is the same
  // values in the partitioned order. Same float operations in the same order: compared exactly.
  report::Check check(const std::string& variant) override {
    const auto& v = variants_[variant];
    const auto& ref = v.input == Input::random ? reference() : partitioned_reference();
    return check_result(y_.get(), ref, Tolerance{0, 0});
  }

 private:
  const Variants& variants_;

  dim3 grid() const { return dim3(static_cast<unsigned>((n_ + kBlock - 1) / kBlock)); }

  // Computed on the first check that needs them.
  const std::vector<float>& reference() {
    if (reference_.empty()) {
      reference_.resize(n_);
      parallel_for(n_, [this](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
          const float x = host_x_[i];
          reference_[i] = takes_polynomial(x) ? polynomial_path(x) : rotation_path(x);
        }
      });
    }
    return reference_;
  }
  const std::vector<float>& partitioned_reference() {
    if (partitioned_reference_.empty()) {
      const auto& ref = reference();
      partitioned_reference_.resize(n_);
      for (std::size_t i = 0; i < n_; ++i) partitioned_reference_[i] = ref[order_[i]];
    }
    return partitioned_reference_;
  }

  std::size_t n_;
  std::vector<float> host_x_;
  std::vector<std::uint32_t> order_;  // partitioned position -> index in host_x_
  std::size_t positives_ = 0;         // elements that take the polynomial path
  std::vector<float> reference_, partitioned_reference_;
  DeviceBuffer<float> x_, partitioned_, y_;
};

std::unique_ptr<LabRun> setup_run(const Variants& variants, const ParamValues& params,
                                  std::uint64_t seed) {
  return std::make_unique<DivergenceRun>(variants, static_cast<std::size_t>(params.at("size")),
                                         seed);
}

std::unique_ptr<Lab> make_lab() {
  LabSpec spec;
  spec.name = "divergence";
  spec.topic = "warp divergence, predication, data layout";
  spec.summary = "a sign-dependent branch between two long paths: divergent, branchless, sorted";
  spec.teaching_point =
      "A warp issues one instruction stream for its 32 lanes, so when a data-dependent branch "
      "splits it, the warp runs both paths back to back with part of its lanes masked off: "
      "threads per instruction fall toward 16 and the time is that of both paths. Computing "
      "both sides and selecting brings every lane back but not the time, because each lane "
      "now does both paths' work. Grouping the data so that every warp takes a single side "
      "(here a partition by sign) is what halves the instructions.";
  spec.params = {
      {"size", "elements (one thread each)", 1 << 25, 1, 1 << 28, true},
  };
  return make_table_lab(std::move(spec), variant_table(), setup_run);
}

}  // namespace
}  // namespace gpulab::labs

GPULAB_REGISTER_LAB(gpulab::labs::make_lab)
