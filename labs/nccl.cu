// Lab `nccl`: one step of data-parallel training on every visible GPU, one process driving them
// all (ncclCommInitAll). Each GPU computes the gradient of its own shard of the data, the GPUs
// sum their gradients, and each applies the summed gradient to its copy of the parameters:
//
//   g_r[i] = G(x_r[i])   on GPU r,       s[i] = sum over r of g_r[i],       w'[i] = w[i] - lr s[i]
//
// G is `rounds` dependent steps of a 32-bit linear congruential generator, its top 23 bits read
// as a float in [0, 1): a compute-bound stand-in for a backward pass whose length the parameter
// sets. The variants differ in how the sum is communicated and when:
//   serial                      the whole gradient, then one all-reduce, then the update
//   bucketed-overlap            the gradient in buckets, each bucket's all-reduce on a stream of
//                               its own as soon as that bucket is computed, overlapping the
//                               next bucket's compute (what DDP does with its gradient buckets)
//   reduce-scatter-all-gather   the whole gradient, a reduce-scatter (each GPU gets the sum of
//                               its 1/n of the elements), the update of that shard alone, and an
//                               all-gather of the updated shards (what ZeRO / FSDP do)
//
// Napkin math (two H200 linked by NV18; H200.md: all-reduce bus bandwidth 325 GB/s at 1 GiB):
//  - Gradient: 2^28 elements x 256 steps = 6.9e10 dependent IMADs per GPU; an SM issues 64 per
//    clock, 132 x 64 x 1.98 GHz = 1.67e13 IMAD/s: ~4.1 ms. Its 2 GiB of DRAM traffic (~0.5 ms)
//    hides under that.
//  - All-reduce of 1 GiB: nccl-tests' bus bandwidth is algbw x 2 (n - 1) / n, which for two GPUs
//    is the algorithm bandwidth itself: 1.07e9 B / 325e9 B/s = ~3.3 ms.
//  - Update: reads w and s, writes w' (3 GiB at ~4 TB/s): ~0.8 ms.
//  - serial: 4.1 + 3.3 + 0.8 = ~8.2 ms, nothing overlapping. bucketed-overlap (8 buckets): the
//    compute of bucket b + 1 runs under the reduction of bucket b, so ~4.1 + 3.3 / 8 + 0.8
//    = ~5.3 ms if neither slowed the other; they do share the SMs (NCCL's kernels run on a few of
//    them) and DRAM, which the timeline shows. reduce-scatter-all-gather moves the same bytes as
//    one all-reduce (a ring all-reduce is a reduce-scatter followed by an all-gather) and
//    updates half the parameters per GPU: ~4.1 + 1.65 + 0.4 + 1.65 = ~7.8 ms; its point is what
//    it saves in memory (the optimizer's state of a shard only), not time.
//
// NCCL's kernels wait for their peers on the other GPUs: replayed one at a time, as counter
// collection does, they never finish. The lab is timed and traced, never profiled.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "labs/harness/check.hpp"
#include "labs/harness/cuda_check.hpp"
#include "labs/harness/device_buffer.hpp"
#include "labs/harness/harness.hpp"
#include "labs/harness/nccl_library.hpp"
#include "labs/harness/parallel_for.hpp"
#include "labs/harness/random.hpp"
#include "labs/harness/registry.hpp"
#include "labs/harness/table_lab.hpp"

#if GPULAB_HAVE_NCCL
#include <nccl.h>
#define GPULAB_NCCL_CHECK(call) GPULAB_API_CHECK("NCCL", call, ncclSuccess, ::ncclGetErrorString)
#endif

namespace gpulab::labs {
namespace {

// ---- the variants -------------------------------------------------------------------------------

enum class Schedule { serial, bucketed_overlap, reduce_scatter_all_gather };

struct NcclVariant {
  VariantSpec spec;
  Schedule schedule;
};
using Variants = VariantTable<NcclVariant>;

std::vector<NcclVariant> variant_table() {
  return {
      {{"serial", Role::baseline,
        "the whole gradient, then one all-reduce of it on the same stream, then the update", ""},
       Schedule::serial},
      {{"bucketed-overlap", Role::optimized,
        "the gradient in buckets; each bucket's all-reduce on a communication stream of the "
        "greatest priority as soon as it is computed, under the next bucket's compute",
        ""},
       Schedule::bucketed_overlap},
      {{"reduce-scatter-all-gather", Role::optimized,
        "the whole gradient, a reduce-scatter, each GPU's update of its shard, an all-gather of "
        "the updated shards",
        ""},
       Schedule::reduce_scatter_all_gather},
  };
}

// The GPUs the lab runs on, the first `gpus` visible ones (0: every visible one), or why it
// cannot run here: NCCL missing, fewer than two GPUs unless one was asked for, or fewer than
// asked. One GPU runs only when asked: its collectives move nothing between GPUs.
std::string why_not_here(std::int64_t gpus, int& devices) {
  std::string why;
  if (!nccl_available(why)) return why;
  int visible = 0;
  GPULAB_CUDA_CHECK(cudaGetDeviceCount(&visible));
  if (gpus > visible)
    return fmt::format("gpus={} asks for more GPUs than the {} this machine has", gpus, visible);
  if (gpus == 0 && visible < 2)
    return fmt::format(
        "needs two or more GPUs (collectives between them); this machine has {} "
        "(gpus=1 runs the lab on one, with nothing to communicate)",
        visible);
  devices = gpus == 0 ? visible : static_cast<int>(gpus);
  return "";
}

#if GPULAB_HAVE_NCCL

constexpr int kBlock = 256;
constexpr std::uint32_t kMultiplier = 1664525u;  // Numerical Recipes' 32-bit LCG
constexpr std::uint32_t kIncrement = 1013904223u;
// A power of two: lr x s is exact, so w - lr s rounds once, on the GPU (contracted into an FMA
// or not) as in the reference.
constexpr float kLearningRate = 1.0f / 64;

// ---- the kernels --------------------------------------------------------------------------------

// One generator step as inline PTX, opaque to the compiler's algebra (see labs/streams.cu): each
// step stays one IMAD.
__device__ __forceinline__ std::uint32_t lcg_step(std::uint32_t x) {
  asm("mad.lo.u32 %0, %0, %1, %2;" : "+r"(x) : "n"(kMultiplier), "n"(kIncrement));
  return x;
}

// The top 23 bits as a float in [0, 1): exact, and a sum of two such values is exact too.
__host__ __device__ inline float to_unit(std::uint32_t x) {
  return static_cast<float>(x >> 9) * (1.0f / (1u << 23));
}

// One element per thread, `rounds` dependent steps: 256-thread blocks, many waves; the IMAD pipe
// is the limit (16 warps per scheduler hide the IMAD's latency).
__global__ void gradient(const std::uint32_t* __restrict__ x, float* __restrict__ g, std::size_t n,
                         int rounds) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  std::uint32_t v = x[i];
#pragma unroll 8
  for (int r = 0; r < rounds; ++r) v = lcg_step(v);
  g[i] = to_unit(v);
}

// w' = w - lr s: 12 bytes per element, bandwidth-bound.
__global__ void update(const float* __restrict__ w, const float* __restrict__ s,
                       float* __restrict__ w_new, std::size_t n, float lr) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) w_new[i] = w[i] - lr * s[i];
}

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + kBlock - 1) / kBlock); }

// ---- the CPU reference --------------------------------------------------------------------------
// `rounds` steps of the generator are one affine map x -> a x + c (mod 2^32), composed once.
struct Affine {
  std::uint32_t a = 1, c = 0;
};

Affine steps_of(int rounds) {
  Affine m;
  for (int r = 0; r < rounds; ++r) m = {kMultiplier * m.a, kMultiplier * m.c + kIncrement};
  return m;
}

// GPU r's input words: the upper 32 bits of its own random stream.
std::uint32_t input_word(std::uint64_t seed, int rank, std::size_t i) {
  return static_cast<std::uint32_t>(random_bits(stream_seed(seed, rank + 1), i) >> 32);
}

// The current device's greatest stream priority.
int greatest_priority() {
  int least = 0, greatest = 0;
  GPULAB_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  return greatest;
}

// What one GPU holds: its streams, its communicator, its data, and the events that order its
// streams. The communication stream has the greatest priority: an NCCL kernel takes whole SMs
// and shares them with no other kernel, so at the same priority a bucket's all-reduce waits
// until the next bucket's gradient (~124 waves of blocks) has started its last block. On the
// H200 (scripts/gpu/stream_priority_probe.cu: 16 one-per-SM blocks behind a gradient bucket) the
// wait was 556-573 us at the same priority and 7.0-7.2 us at the greatest.
struct Rank {
  int device = 0;
  CudaStream compute;
  CudaStream communication{cudaStreamNonBlocking, greatest_priority()};
  CudaEvent done{cudaEventDisableTiming};       // the variant's last work on this GPU
  CudaEvent comm_done{cudaEventDisableTiming};  // the communication stream's last work
  std::vector<CudaEvent> bucket_ready;          // bucket b's gradient is computed
  ncclComm_t comm = nullptr;
  DeviceBuffer<std::uint32_t> x;
  DeviceBuffer<float> g, w, w_new;
};

class Device {  // makes a GPU current, and device 0 current again at the end of the scope
 public:
  explicit Device(int device) { GPULAB_CUDA_CHECK(cudaSetDevice(device)); }
  ~Device() { GPULAB_CUDA_CHECK_NOEXCEPT(cudaSetDevice(0)); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
};

class NcclRun final : public LabRun {
 public:
  NcclRun(const Variants& variants, int devices, std::size_t n, int buckets, int rounds,
          std::uint64_t seed)
      : variants_(variants), n_(n), rounds_(rounds), seed_(seed) {
    if (n_ % static_cast<std::size_t>(devices) != 0)
      throw UsageError(
          fmt::format("nccl: elements={} is not a multiple of the {} GPUs (each "
                      "GPU's shard of the reduce-scatter must be whole)",
                      n_, devices));
    for (int b = 0; b < buckets; ++b) {  // the last bucket takes the remainder
      const std::size_t begin = n_ / buckets * b;
      const std::size_t end = b + 1 == buckets ? n_ : n_ / buckets * (b + 1);
      if (end > begin) buckets_.push_back({begin, end - begin});
    }
    // NVLink multicast (NVLS) stays off unless the user turned it on: it reserves multicast
    // objects on the fabric that a shared machine must not be left holding.
    setenv("NCCL_NVLS_ENABLE", "0", 0);

    std::vector<float> w(n_);
    fill_uniform(w, seed_);
    std::vector<std::uint32_t> x(n_);
    std::vector<int> ids(devices);
    ranks_.reserve(devices);
    for (int d = 0; d < devices; ++d) {
      ids[d] = d;
      Device current(d);
      require_device_memory(n_ * 16, "the nccl lab's input, gradient and parameters");
      Rank& r = ranks_.emplace_back();  // its streams and events on GPU d, made current above
      r.device = d;
      r.x = DeviceBuffer<std::uint32_t>(n_);
      r.g = DeviceBuffer<float>(n_);
      r.w = DeviceBuffer<float>(n_);
      r.w_new = DeviceBuffer<float>(n_);
      for (std::size_t b = 0; b < buckets_.size(); ++b)
        r.bucket_ready.emplace_back(cudaEventDisableTiming);
      parallel_for(n_, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) x[i] = input_word(seed_, d, i);
      });
      GPULAB_CUDA_CHECK(cudaMemcpy(r.x.get(), x.data(), r.x.bytes(), cudaMemcpyHostToDevice));
      GPULAB_CUDA_CHECK(cudaMemcpy(r.w.get(), w.data(), r.w.bytes(), cudaMemcpyHostToDevice));
    }
    std::vector<ncclComm_t> comms(devices);
    GPULAB_NCCL_CHECK(ncclCommInitAll(comms.data(), devices, ids.data()));
    for (int d = 0; d < devices; ++d) ranks_[d].comm = comms[d];
    initial_w_ = std::move(w);
  }

  std::vector<std::string> warnings() const override {
    if (ranks_.size() > 1) return {};
    return {
        "ran on one GPU (gpus=1): its collectives move nothing between GPUs, so their times "
        "and bandwidths say nothing about the links; the sums are still checked"};
  }

  ~NcclRun() override {
    for (auto& r : ranks_)
      if (r.comm) ncclCommDestroy(r.comm);
  }

  report::WorkModel work() const override {
    report::WorkModel m;  // what matters is the collective; the kernels' bytes are the lab's aside
    m.collective_bytes = static_cast<double>(n_ * sizeof(float));
    m.ranks = static_cast<int>(ranks_.size());
    return m;
  }

  std::vector<KernelLaunch> kernels(const std::string& variant) const override {
    const dim3 block(kBlock);
    const auto gradients = [&](std::vector<KernelLaunch>& out, std::size_t n, const char* what) {
      for (const auto& r : ranks_)
        out.push_back({fmt::format("gradient{} GPU {}", what, r.device),
                       reinterpret_cast<const void*>(&gradient), dim3(blocks_for(n)), block});
    };
    const auto collective = [&](std::vector<KernelLaunch>& out, const char* name) {
      // A communicator of one rank launches no kernel: on the H200, NCCL 2.28's in-place
      // collectives of one GPU left only the gradient and update kernels in the trace.
      if (ranks_.size() < 2) return;
      for (const auto& r : ranks_)
        out.push_back({fmt::format("{} GPU {}", name, r.device), nullptr, dim3(), dim3()});
    };
    const auto updates = [&](std::vector<KernelLaunch>& out, std::size_t n) {
      for (const auto& r : ranks_)
        out.push_back({fmt::format("update GPU {}", r.device),
                       reinterpret_cast<const void*>(&update), dim3(blocks_for(n)), block});
    };
    std::vector<KernelLaunch> out;
    switch (variants_[variant].schedule) {
      case Schedule::serial:
        gradients(out, n_, "");
        collective(out, "all-reduce");
        updates(out, n_);
        break;
      case Schedule::bucketed_overlap:
        for (const auto& b : buckets_) {
          gradients(out, b.count, " bucket");
          collective(out, "all-reduce");
        }
        updates(out, n_);
        break;
      case Schedule::reduce_scatter_all_gather:
        gradients(out, n_, "");
        collective(out, "reduce-scatter");
        updates(out, shard());
        collective(out, "all-gather");
        break;
    }
    return out;
  }

  // Every GPU's work starts after `stream` (device 0's, whose events time the variant) reaches
  // this launch, and `stream` waits for every GPU's last work: the variant's time is the step's.
  void launch(const std::string& variant, cudaStream_t stream) override {
    start_.record(stream);
    for (auto& r : ranks_) {
      Device current(r.device);
      GPULAB_CUDA_CHECK(cudaStreamWaitEvent(r.compute.get(), start_.get()));
    }
    switch (variants_[variant].schedule) {
      case Schedule::serial:
        launch_serial();
        break;
      case Schedule::bucketed_overlap:
        launch_bucketed();
        break;
      case Schedule::reduce_scatter_all_gather:
        launch_sharded();
        break;
    }
    for (auto& r : ranks_) {
      Device current(r.device);
      r.done.record(r.compute.get());
    }
    for (auto& r : ranks_) GPULAB_CUDA_CHECK(cudaStreamWaitEvent(stream, r.done.get()));
  }

  void poison_outputs(cudaStream_t) override {
    for (auto& r : ranks_) {
      Device current(r.device);
      poison(r.w_new.get(), r.w_new.bytes(), r.compute.get());
    }
  }

  // Every GPU must hold the same updated parameters: the reference's.
  report::Check check(const std::string&) override {
    const std::vector<float>& ref = reference();
    report::Check worst;
    for (auto& r : ranks_) {
      Device current(r.device);
      GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
      // Each GPU's sums may be added in another order than the reference's once there are more
      // than two: a few roundings of values below 2 x ranks.
      report::Check c = check_result(r.w_new.get(), ref, {0, 4e-7 * ranks_.size()});
      if (c.status == report::CheckStatus::failed) {
        c.message = fmt::format("GPU {}: {}", r.device, c.message);
        return c;
      }
      if (c.max_abs_error >= worst.max_abs_error) worst = c;
    }
    return worst;
  }

 private:
  struct Bucket {
    std::size_t begin;
    std::size_t count;
  };

  std::size_t shard() const { return n_ / ranks_.size(); }

  // One collective call per GPU, grouped: from one thread, NCCL must see them together.
  template <typename Call>
  void grouped(Call call) {
    GPULAB_NCCL_CHECK(ncclGroupStart());
    for (std::size_t k = 0; k < ranks_.size(); ++k) call(ranks_[k], k);
    GPULAB_NCCL_CHECK(ncclGroupEnd());
  }

  void gradients(std::size_t begin, std::size_t count) {
    for (auto& r : ranks_) {
      Device current(r.device);
      gradient<<<blocks_for(count), kBlock, 0, r.compute.get()>>>(
          r.x.get() + begin, r.g.get() + begin, count, rounds_);
      GPULAB_CUDA_CHECK_LAUNCH();
    }
  }

  void updates(std::size_t begin, std::size_t count) {
    for (auto& r : ranks_) {
      Device current(r.device);
      update<<<blocks_for(count), kBlock, 0, r.compute.get()>>>(
          r.w.get() + begin, r.g.get() + begin, r.w_new.get() + begin, count, kLearningRate);
      GPULAB_CUDA_CHECK_LAUNCH();
    }
  }

  void launch_serial() {
    gradients(0, n_);
    grouped([&](Rank& r, std::size_t) {
      GPULAB_NCCL_CHECK(
          ncclAllReduce(r.g.get(), r.g.get(), n_, ncclFloat, ncclSum, r.comm, r.compute.get()));
    });
    updates(0, n_);
  }

  void launch_bucketed() {
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      const Bucket& bucket = buckets_[b];
      gradients(bucket.begin, bucket.count);
      for (auto& r : ranks_) {
        Device current(r.device);
        r.bucket_ready[b].record(r.compute.get());
        GPULAB_CUDA_CHECK(cudaStreamWaitEvent(r.communication.get(), r.bucket_ready[b].get()));
      }
      grouped([&](Rank& r, std::size_t) {
        float* g = r.g.get() + bucket.begin;
        GPULAB_NCCL_CHECK(
            ncclAllReduce(g, g, bucket.count, ncclFloat, ncclSum, r.comm, r.communication.get()));
      });
    }
    for (auto& r : ranks_) {
      Device current(r.device);
      r.comm_done.record(r.communication.get());
      GPULAB_CUDA_CHECK(cudaStreamWaitEvent(r.compute.get(), r.comm_done.get()));
    }
    updates(0, n_);
  }

  // In place: GPU k's shard of the sum lands at k x shard in g, and the all-gather sends each
  // GPU's updated shard from where the others' land.
  void launch_sharded() {
    gradients(0, n_);
    const std::size_t s = shard();
    grouped([&](Rank& r, std::size_t k) {
      GPULAB_NCCL_CHECK(ncclReduceScatter(r.g.get(), r.g.get() + k * s, s, ncclFloat, ncclSum,
                                          r.comm, r.compute.get()));
    });
    for (std::size_t k = 0; k < ranks_.size(); ++k) {
      Rank& r = ranks_[k];
      Device current(r.device);
      update<<<blocks_for(s), kBlock, 0, r.compute.get()>>>(
          r.w.get() + k * s, r.g.get() + k * s, r.w_new.get() + k * s, s, kLearningRate);
      GPULAB_CUDA_CHECK_LAUNCH();
    }
    grouped([&](Rank& r, std::size_t k) {
      GPULAB_NCCL_CHECK(ncclAllGather(r.w_new.get() + k * s, r.w_new.get(), s, ncclFloat, r.comm,
                                      r.compute.get()));
    });
  }

  // w - lr x (the gradients summed in GPU order), from the composed generator: one multiply-add
  // per element and GPU whatever `rounds` is.
  const std::vector<float>& reference() {
    if (reference_.empty()) {
      reference_.resize(n_);
      const Affine k = steps_of(rounds_);
      const int ranks = static_cast<int>(ranks_.size());
      parallel_for(n_, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
          float sum = 0;
          for (int r = 0; r < ranks; ++r) sum += to_unit(k.a * input_word(seed_, r, i) + k.c);
          reference_[i] = initial_w_[i] - kLearningRate * sum;
        }
      });
    }
    return reference_;
  }

  const Variants& variants_;
  std::size_t n_;
  int rounds_;
  std::uint64_t seed_;
  std::vector<Bucket> buckets_;
  std::vector<Rank> ranks_;
  CudaEvent start_{cudaEventDisableTiming};  // on device 0: where every GPU's work starts
  std::vector<float> initial_w_;
  std::vector<float> reference_;
};

#endif  // GPULAB_HAVE_NCCL

// A run that cannot run here: every variant is skipped with the reason.
class SkippedRun final : public LabRun {
 public:
  explicit SkippedRun(std::string why) : why_(std::move(why)) {}
  report::WorkModel work() const override { return {}; }
  std::optional<std::string> skip_reason(const std::string&) const override { return why_; }
  std::vector<KernelLaunch> kernels(const std::string&) const override { return {}; }
  void launch(const std::string&, cudaStream_t) override {}
  void poison_outputs(cudaStream_t) override {}
  report::Check check(const std::string&) override { return {}; }

 private:
  std::string why_;
};

std::unique_ptr<LabRun> setup_run(const Variants& variants, const ParamValues& params,
                                  std::uint64_t seed) {
  int devices = 0;
  if (std::string why = why_not_here(params.at("gpus"), devices); !why.empty())
    return std::make_unique<SkippedRun>(std::move(why));
#if GPULAB_HAVE_NCCL
  return std::make_unique<NcclRun>(
      variants, devices, static_cast<std::size_t>(params.at("elements")),
      static_cast<int>(params.at("buckets")), static_cast<int>(params.at("rounds")), seed);
#else
  (void)variants, (void)params, (void)seed;
  return std::make_unique<SkippedRun>("gpulab was built without NCCL");
#endif
}

std::unique_ptr<Lab> make_lab() {
  LabSpec spec;
  spec.name = "nccl";
  spec.topic = "NCCL collectives across GPUs: all-reduce, reduce-scatter + all-gather, overlap";
  spec.summary =
      "a data-parallel step on every GPU: gradient, sum across GPUs, update; serial, bucketed "
      "and overlapped, sharded";
  spec.teaching_point =
      "Summing gradients across GPUs costs the time of moving them over the links, and on one "
      "stream that time adds to the compute. Cut into buckets, each bucket's all-reduce can run "
      "on a stream of its own while the next bucket is computed, hiding most of the "
      "communication, at the price of sharing the SMs with NCCL's kernels. A reduce-scatter "
      "followed by an all-gather moves the same bytes as an all-reduce but lets each GPU update "
      "only its shard of the parameters.";
  spec.params = {
      {"elements", "gradient floats per GPU (the all-reduce's message size / 4)", 1 << 28, 1 << 12,
       1 << 30, true},
      {"buckets", "buckets of the bucketed-overlap variant", 8, 1, 64, false},
      {"rounds", "dependent generator steps per gradient element: the compute's length", 256, 1,
       1 << 16, false},
      {"gpus", "GPUs to run on, the first ones visible (0: every visible GPU, at least two)", 0, 0,
       64, false},
  };
  spec.traced = true;
  spec.no_counters =
      "NCCL's kernels wait for their peers on the other GPUs and never finish when replayed one "
      "at a time";
  spec.default_warmup = 3;
  spec.default_repeat = 10;
  return make_table_lab(std::move(spec), variant_table(), setup_run);
}

}  // namespace
}  // namespace gpulab::labs

GPULAB_REGISTER_LAB(gpulab::labs::make_lab)
