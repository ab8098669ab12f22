// Lab `aos-soa`: particles with four float fields (x, y, z, w), stored as an array of structs
// (AoS: x0 y0 z0 w0 x1 y1 ...) or as a struct of arrays (SoA: x0 x1 ... | y0 y1 ... | ...).
//
// The lab's computation touches one field: out[i] = 2 * x[i] + 1. Its work model is what that
// computation must move: n floats read and n floats written. In AoS the x fields lie 16 bytes
// apart, so reading them drags the other three fields through every sector; in SoA they are
// contiguous.
//
// The third variant computes a different quantity on purpose, out[i] = x + y + z + w, to show the
// other side: when every field is used, AoS is fine, since a 16-byte struct load uses all the
// bytes it fetches. It has its own CPU reference. Measured against the lab's one-field model it
// reads 4x the model's bytes, and that 4 is the extra useful work, not waste: compare its DRAM
// bytes with aos (the same) rather than with the model.
//
// Default size: 2^26 particles: AoS 1 GiB, SoA 1 GiB, output 256 MiB (2.4 GB in all). The SoA
// kernel moves 0.54 GB, ~0.13 ms at the copy roof.
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

constexpr int kFields = 4;
constexpr int kBlock = 256;
constexpr int kItemsPerThread = 4;  // four independent loads in flight per thread
constexpr int kItemsPerBlock = kBlock * kItemsPerThread;

// 16 bytes, aligned to 16: a whole-struct load compiles to one 128-bit load.
struct alignas(16) Particle {
  float x, y, z, w;
};
static_assert(sizeof(Particle) == kFields * sizeof(float), "no padding in Particle");

// The two computations, in float, in a fixed order: CPU and GPU agree bit for bit. (2x is exact,
// so whether the compiler fuses 2x + 1 into an FMA does not change the result.)
__host__ __device__ inline float one_field(float x) { return x * 2.0f + 1.0f; }
__host__ __device__ inline float all_fields(float x, float y, float z, float w) {
  return ((x + y) + z) + w;
}

// ---- what each variant reads for particle i ----------------------------------------------------
// The particles in both layouts; each variant reads only its own.
struct ParticleArrays {
  const Particle* aos;  // n structs
  const float* soa_x;   // n floats; y, z and w follow in planes of n that no variant here reads
};

// AoS, one field. Lane k reads the 4 bytes at 16k: a warp's load spans 512 bytes, 16 sectors
// per request where 4 would do, and each 32-byte sector carries 8 useful bytes. DRAM reads all
// 16 bytes of every particle: 4x the model. Expect ~4x the time of SoA.
struct AosOneField {
  __device__ static float compute(const ParticleArrays& p, std::size_t i) {
    // PROBLEM: one 4-byte field of each 16-byte particle: 16 sectors per request
    return one_field(p.aos[i].x);
  }
};

// SoA, one field. Lane k reads the 4 bytes at 4k: 128 bytes, 4 sectors per request, all used.
// DRAM reads the model's bytes once; with 4 loads in flight per thread, the copy roof.
struct SoaOneField {
  __device__ static float compute(const ParticleArrays& p, std::size_t i) {
    return one_field(p.soa_x[i]);
  }
};

// AoS, every field. One 128-bit load per particle: a warp's load again spans 512 bytes and 16
// sectors, but now every byte is used, so 16 sectors per request is the ideal for this access
// width (not a coalescing problem). DRAM reads what aos reads, the whole array, and the kernel
// runs at about the same speed as aos while doing four times the useful reading.
struct AosAllFields {
  __device__ static float compute(const ParticleArrays& p, std::size_t i) {
    const Particle q = p.aos[i];
    return all_fields(q.x, q.y, q.z, q.w);
  }
};

// Each thread handles 4 particles one block-width apart: every warp instruction covers 32
// consecutive particles and each thread has 4 independent loads in flight (one load per thread
// leaves too few bytes outstanding to reach the H200's copy roof).
template <typename Access>
__global__ void particles_kernel(ParticleArrays p, float* __restrict__ out, std::size_t n) {
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(kItemsPerBlock) + threadIdx.x;
  float v[kItemsPerThread] = {};
#pragma unroll
  for (int k = 0; k < kItemsPerThread; ++k) {
    const std::size_t i = first + static_cast<std::size_t>(k) * kBlock;
    if (i < n) v[k] = Access::compute(p, i);
  }
#pragma unroll
  for (int k = 0; k < kItemsPerThread; ++k) {
    const std::size_t i = first + static_cast<std::size_t>(k) * kBlock;
    if (i < n) out[i] = v[k];
  }
}

// ---- the lab ----------------------------------------------------------------------------------

using KernelFn = void (*)(ParticleArrays, float*, std::size_t);

enum class Computation { one_field, all_fields };

struct AosSoaVariant {
  VariantSpec spec;
  const char* kernel_name;
  KernelFn kernel;
  Computation computation;  // which CPU reference the output is checked against
};
using Variants = VariantTable<AosSoaVariant>;

std::vector<AosSoaVariant> variant_table() {
  return {
      {{"aos", Role::baseline,
        "array of structs, one field read: 16 sectors per request, 3/4 of every sector unused",
        "uncoalesced-global"},
       "particles_aos", particles_kernel<AosOneField>, Computation::one_field},
      {{"soa", Role::optimized, "struct of arrays, one field read: 4 sectors per request, all used",
        "memory-bound-at-roof"},
       "particles_soa", particles_kernel<SoaOneField>, Computation::one_field},
      {{"aos-all-fields", Role::optimized,
        "array of structs, every field used (x+y+z+w): one 16-byte load, all bytes useful", ""},
       "particles_aos_all_fields", particles_kernel<AosAllFields>, Computation::all_fields},
  };
}

class AosSoaRun final : public LabRun {
 public:
  AosSoaRun(const Variants& variants, std::size_t n, std::uint64_t seed)
      : variants_(variants), n_(n), host_aos_(kFields * n) {
    require_device_memory((2 * kFields + 1) * n_ * sizeof(float), "aos-soa at this size");
    aos_ = DeviceBuffer<Particle>(n_);
    soa_ = DeviceBuffer<float>(kFields * n_);
    out_ = DeviceBuffer<float>(n_);

    // One set of particles, laid out both ways.
    fill_uniform(host_aos_, seed);
    std::vector<float> host_soa(kFields * n_);
    parallel_for(n_, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i)
        for (int f = 0; f < kFields; ++f) host_soa[f * n_ + i] = host_aos_[kFields * i + f];
    });
    GPULAB_CUDA_CHECK(
        cudaMemcpy(aos_.get(), host_aos_.data(), aos_.bytes(), cudaMemcpyHostToDevice));
    GPULAB_CUDA_CHECK(
        cudaMemcpy(soa_.get(), host_soa.data(), soa_.bytes(), cudaMemcpyHostToDevice));
  }

  // The one-field computation: n floats read, n written, one multiply-add each.
  report::WorkModel work() const override {
    const double bytes = static_cast<double>(n_) * sizeof(float);
    return {bytes, bytes, 2.0 * static_cast<double>(n_)};
  }

  // aos-all-fields computes something else: it must read all 4n floats (and adds 3 per particle).
  std::optional<report::WorkModel> variant_work(const std::string& variant) const override {
    if (variants_[variant].computation != Computation::all_fields) return std::nullopt;
    const double bytes = static_cast<double>(n_) * sizeof(float);
    return report::WorkModel{kFields * bytes, bytes, 3.0 * static_cast<double>(n_)};
  }

  std::vector<KernelLaunch> kernels(const std::string& variant) const override {
    const auto& v = variants_[variant];
    return {{v.kernel_name, reinterpret_cast<const void*>(v.kernel), grid(), dim3(kBlock), 0}};
  }

  void launch(const std::string& variant, cudaStream_t stream) override {
    const auto& v = variants_[variant];
    v.kernel<<<grid(), kBlock, 0, stream>>>(ParticleArrays{aos_.get(), soa_.get()}, out_.get(), n_);
    GPULAB_CUDA_CHECK_LAUNCH();
  }

  void poison_outputs(cudaStream_t stream) override { poison(out_.get(), out_.bytes(), stream); }

  report::Check check(const std::string& variant) override {
    const auto& ref = reference(variants_[variant].computation);
    return check_result(out_.get(), ref, Tolerance{0, 0});  // same float ops, same order
  }

 private:
  const Variants& variants_;

  dim3 grid() const {
    return dim3(static_cast<unsigned>((n_ + kItemsPerBlock - 1) / kItemsPerBlock));
  }

  // Computed on the first check that needs it.
  const std::vector<float>& reference(Computation c) {
    auto& ref = c == Computation::one_field ? one_field_ref_ : all_fields_ref_;
    if (ref.empty()) {
      ref.resize(n_);
      parallel_for(n_, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
          const float* q = &host_aos_[kFields * i];
          ref[i] =
              c == Computation::one_field ? one_field(q[0]) : all_fields(q[0], q[1], q[2], q[3]);
        }
      });
    }
    return ref;
  }

  std::size_t n_;
  std::vector<float> host_aos_;  // x y z w per particle
  std::vector<float> one_field_ref_, all_fields_ref_;
  DeviceBuffer<Particle> aos_;
  DeviceBuffer<float> soa_, out_;
};

std::unique_ptr<LabRun> setup_run(const Variants& variants, const ParamValues& params,
                                  std::uint64_t seed) {
  return std::make_unique<AosSoaRun>(variants, static_cast<std::size_t>(params.at("particles")),
                                     seed);
}

std::unique_ptr<Lab> make_lab() {
  LabSpec spec;
  spec.name = "aos-soa";
  spec.topic = "data layout: array of structs vs struct of arrays";
  spec.summary = "read one field of 16-byte particles from AoS and SoA layouts, and all fields";
  spec.teaching_point =
      "Memory moves whole sectors, so the layout decides how many useful bytes each one "
      "carries. Reading one 4-byte field of a 16-byte struct wastes three quarters of every "
      "sector and costs about 4x the DRAM traffic and time of the same read from a separate "
      "array. When a kernel uses every field, the struct is read in one 16-byte load with "
      "nothing wasted: choose the layout by the access pattern of the hot kernels.";
  spec.params = {
      {"particles", "particles (4 floats each)", 1 << 26, 1, 100'000'000, true},
  };
  return make_table_lab(std::move(spec), variant_table(), setup_run);
}

}  // namespace
}  // namespace gpulab::labs

GPULAB_REGISTER_LAB(gpulab::labs::make_lab)
