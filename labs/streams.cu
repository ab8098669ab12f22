// Lab `streams`: send 1 GiB to the GPU, transform it, and bring it back, chunk by chunk.
//
// The computation: out[i] = L^K(in[i]), where L(x) = 1664525 x + 1013904223 (mod 2^32) is a
// linear congruential step and K = `rounds` (1024 by default): K dependent integer
// multiply-adds per element. The data starts and ends in host memory, so every variant moves
// size x 4 bytes to the device and as many back, and runs the kernel in between, in `chunks`
// pieces (8 of 128 MiB by default). Only the order of the work and the kind of host memory
// differ between the variants.
//
// Napkin math (an H200 in a virtual machine; its measured timelines are in
// tests/fixtures/labs/streams.json):
//  - Copies: from pinned host memory, 52 GB/s host-to-device: 1 GiB in ~21 ms; device-to-host
//    is assumed about as fast. From pageable memory, 3.5 GB/s: ~0.31 s each way. The copy
//    engine can only read pages that cannot move, so the driver first copies pageable data
//    with the CPU into a pinned staging buffer, piece by piece, and the host waits for it.
//  - Kernel: an SM issues 64 integer multiply-adds (IMAD) per clock, so the GPU does
//    132 x 64 x 1.98 GHz ~ 1.67e13 IMAD/s; 2^28 elements x 1024 steps ~ 2.7e11 IMADs ~ 16 ms.
//    Its DRAM traffic (1 GiB each way, ~0.5 ms) does not matter.
//  - The three stages are of the same order: 21 + 16 + 21 ms. One after the other
//    (serial-pinned) they take ~58 ms. Pipelined over the chunks (overlapped), the whole takes
//    the slowest stage plus one chunk of each of the others: ~(chunks + 2) / chunks x 21 ms
//    ~ 26 ms, 2.2x faster, and nearly all kernel time runs under copies. serial-pageable takes
//    ~0.63 s, 97% of it copying.
#include <algorithm>
#include <cstdint>
#include <cstring>
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
constexpr std::uint32_t kMultiplier = 1664525u;  // Numerical Recipes' 32-bit LCG
constexpr std::uint32_t kIncrement = 1013904223u;

// ---- the kernel ---------------------------------------------------------------------------------

// One step of the generator, as inline PTX. Written in C++, the compiler unrolls the loop below
// and merges each group of unrolled steps into a single multiply-add with precomputed constants
// (x -> a(a x + c) + c = a^2 x + (a c + c)): the PTX of a plain loop does one mad.lo per 4
// steps, which would make the kernel 4x shorter than the lab says. An asm statement is opaque
// to that algebra, so each step stays one IMAD (sass, CUDA 13.0: 8 IMADs per unrolled
// iteration plus the loop's add, compare and branch).
__device__ __forceinline__ std::uint32_t lcg_step(std::uint32_t x) {
  asm("mad.lo.u32 %0, %0, %1, %2;" : "+r"(x) : "n"(kMultiplier), "n"(kIncrement));
  return x;
}

// One element per thread, `rounds` dependent steps (a runtime argument: nothing to fold).
// 256-thread blocks; a default chunk of 2^25 elements is 131,072 blocks, many waves of full
// occupancy: 16 warps per scheduler hide the IMAD's ~4-clock latency, so the chain costs issue
// slots, ~11 instructions per 8 steps, and the IMAD pipe's 64 per clock per SM is the limit.
__global__ void lcg_rounds(const std::uint32_t* __restrict__ in, std::uint32_t* __restrict__ out,
                           std::size_t n, int rounds) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  std::uint32_t x = in[i];
#pragma unroll 8
  for (int r = 0; r < rounds; ++r) x = lcg_step(x);
  out[i] = x;
}

// ---- the CPU reference --------------------------------------------------------------------------
// The kernel really does K dependent steps; the reference uses the algebra instead. A step is
// the affine map x -> A x + C (mod 2^32), and affine maps compose into affine maps: after k
// steps x -> a_k x + c_k, one more gives x -> (A a_k) x + (A c_k + C). So K steps are one
// multiply-add with (a_K, c_K), computed once, and the reference costs one multiply-add per
// element whatever K is. Unsigned arithmetic wraps modulo 2^32 in C++ as on the GPU: exact.
struct Affine {
  std::uint32_t a = 1, c = 0;  // the identity
};

Affine steps_of(int rounds) {
  Affine m;
  for (int r = 0; r < rounds; ++r) m = {kMultiplier * m.a, kMultiplier * m.c + kIncrement};
  return m;
}

// Seeded input words: the upper 32 bits of each random value, zero replaced by one.
void fill_words(std::vector<std::uint32_t>& data, std::uint64_t seed) {
  parallel_for(data.size(), [&data, seed](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const auto word = static_cast<std::uint32_t>(random_bits(seed, i) >> 32);
      data[i] = word != 0 ? word : 1u;
    }
  });
}

// ---- the variants -------------------------------------------------------------------------------

// How a variant orders the chunks' copies and kernels.
enum class Schedule {
  serial_pageable,  // one stream, pageable host buffers
  serial_pinned,    // one stream, pinned host buffers
  overlapped,       // chunks spread over several streams, pinned host buffers
};

struct StreamsVariant {
  VariantSpec spec;
  Schedule schedule;
};
using Variants = VariantTable<StreamsVariant>;

std::vector<StreamsVariant> variant_table() {
  return {
      {{"serial-pageable", Role::baseline,
        "per chunk on one stream: copy in, kernel, copy out, from and to pageable std::vector "
        "buffers: every copy is staged through a pinned buffer by the CPU",
        "host-device-transfers"},
       Schedule::serial_pageable},
      {{"serial-pinned", Role::optimized,
        "the same chunks in the same order on one stream, from and to pinned buffers with "
        "cudaMemcpyAsync: fast copies, but nothing runs at the same time",
        "host-device-transfers"},
       Schedule::serial_pinned},
      {{"overlapped", Role::optimized,
        "chunk c on stream c % streams, pinned buffers: the next chunk's copy in, this chunk's "
        "kernel and the last chunk's copy out run at once",
        ""},
       Schedule::overlapped},
  };
}

struct Chunk {
  std::size_t begin = 0;
  std::size_t count = 0;
};

class StreamsRun final : public LabRun {
 public:
  StreamsRun(const Variants& variants, std::size_t n, int chunks, int streams, int rounds,
             std::uint64_t seed)
      : variants_(variants), n_(n), rounds_(rounds) {
    require_device_memory(2 * n_ * sizeof(std::uint32_t), "streams at this size");
    // Balanced chunks: c covers [n c / chunks, n (c + 1) / chunks). When there are fewer
    // elements than chunks some are empty; they are left out (no copy, no launch).
    for (int c = 0; c < chunks; ++c) {
      const std::size_t begin = n_ * c / chunks, end = n_ * (c + 1) / chunks;
      if (end > begin) chunks_.push_back({begin, end - begin});
    }

    pageable_in_.resize(n_);
    pageable_out_.resize(n_);
    fill_words(pageable_in_, seed);
    pinned_in_ = PinnedBuffer<std::uint32_t>(n_);
    pinned_out_ = PinnedBuffer<std::uint32_t>(n_);
    std::memcpy(pinned_in_.get(), pageable_in_.data(), pinned_in_.bytes());
    device_in_ = DeviceBuffer<std::uint32_t>(n_);
    device_out_ = DeviceBuffer<std::uint32_t>(n_);

    // The overlapped variant's streams, created once: creating streams is not free, and a
    // program that pipelines its copies keeps its streams. No more streams than chunks.
    const int used = std::min<int>(streams, static_cast<int>(chunks_.size()));
    for (int s = 0; s < used; ++s) {
      lanes_.emplace_back(cudaStreamDefault);  // blocking: ordered with the legacy stream
      lane_done_.emplace_back(cudaEventDisableTiming);
    }
  }

  // The kernel's DRAM traffic: each element read once and written once. The copies move the
  // same bytes over the link; the timeline, not this model, tells how fast they went.
  report::WorkModel work() const override {
    const double bytes = static_cast<double>(n_) * sizeof(std::uint32_t);
    return {bytes, bytes, 0.0};
  }

  std::vector<KernelLaunch> kernels(const std::string& variant) const override {
    (void)variants_[variant];
    std::vector<KernelLaunch> launches;
    for (const auto& chunk : chunks_)
      launches.push_back({"lcg_rounds", reinterpret_cast<const void*>(lcg_rounds),
                          grid(chunk.count), dim3(kBlock), 0});
    return launches;
  }

  void launch(const std::string& variant, cudaStream_t stream) override {
    switch (variants_[variant].schedule) {
      case Schedule::serial_pageable:
        // The copies are issued with cudaMemcpyAsync on `stream` so that they are ordered with
        // the kernels on any stream; from pageable memory the call behaves like cudaMemcpy all
        // the same: it waits for the stream, and the host waits while the driver stages the
        // data through its pinned buffer. On the legacy default stream this is the textbook
        // loop of cudaMemcpy, kernel, cudaMemcpy.
        for (const auto& chunk : chunks_)
          enqueue_chunk(chunk, pageable_in_.data(), pageable_out_.data(), stream);
        break;
      case Schedule::serial_pinned:
        // Asynchronous copies from pinned memory: the host queues everything at once, but a
        // stream runs its work in order, so the copy engines and the SMs take turns.
        for (const auto& chunk : chunks_)
          enqueue_chunk(chunk, pinned_in_.get(), pinned_out_.get(), stream);
        break;
      case Schedule::overlapped:
        launch_overlapped(stream);
        break;
    }
  }

  // 0xFF bytes: 0xFFFFFFFF is a value the generator can produce, so an unwritten element goes
  // unnoticed only where the reference itself is 0xFFFFFFFF (a chance of 2^-32 per element).
  // The host buffers are written by the CPU: earlier copies into them must be finished first.
  void poison_outputs(cudaStream_t stream) override {
    GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
    std::memset(pageable_out_.data(), 0xFF, pageable_out_.size() * sizeof(std::uint32_t));
    std::memset(pinned_out_.get(), 0xFF, pinned_out_.bytes());
    poison(device_out_.get(), device_out_.bytes(), stream);
  }

  // The output that arrived in the variant's host buffer, word for word against the reference.
  report::Check check(const std::string& variant) override {
    const auto& v = variants_[variant];
    GPULAB_CUDA_CHECK(cudaDeviceSynchronize());
    const std::uint32_t* got =
        v.schedule == Schedule::serial_pageable ? pageable_out_.data() : pinned_out_.get();
    return compare_exact(got, reference().data(), n_);
  }

 private:
  const Variants& variants_;

  static dim3 grid(std::size_t count) {
    return dim3(static_cast<unsigned>((count + kBlock - 1) / kBlock));
  }

  // Copy in, kernel, copy out for one chunk, in order on `stream`.
  void enqueue_chunk(const Chunk& chunk, const std::uint32_t* host_in, std::uint32_t* host_out,
                     cudaStream_t stream) {
    const std::size_t bytes = chunk.count * sizeof(std::uint32_t);
    std::uint32_t* in = device_in_.get() + chunk.begin;
    std::uint32_t* out = device_out_.get() + chunk.begin;
    GPULAB_CUDA_CHECK(
        cudaMemcpyAsync(in, host_in + chunk.begin, bytes, cudaMemcpyHostToDevice, stream));
    lcg_rounds<<<grid(chunk.count), kBlock, 0, stream>>>(in, out, chunk.count, rounds_);
    GPULAB_CUDA_CHECK_LAUNCH();
    GPULAB_CUDA_CHECK(
        cudaMemcpyAsync(host_out + chunk.begin, out, bytes, cudaMemcpyDeviceToHost, stream));
  }

  // Why this overlaps: the GPU has a copy engine for each direction besides its SMs, and work
  // on different streams has no order between it, so the copy in of chunk c+1, the kernel of
  // chunk c and the copy out of chunk c-1 can all run at once. That needs asynchronous copies
  // (cudaMemcpy would hold the host until each copy ends) from pinned memory (a pageable copy
  // waits for its stream and occupies the host while it is staged). Chunks reuse their
  // stream every `streams` chunks, which is enough to keep three stages busy.
  //
  // The streams are forked from `stream` and joined back into it with events, so that the
  // variant starts after the work queued before it and anything queued after it (the timing
  // event, the next poison) waits for all chunks, whatever `stream` is. On the legacy default
  // stream the blocking streams would be ordered that way anyway; the events make it explicit.
  void launch_overlapped(cudaStream_t stream) {
    GPULAB_CUDA_CHECK(cudaEventRecord(fork_.get(), stream));
    for (const auto& lane : lanes_)
      GPULAB_CUDA_CHECK(cudaStreamWaitEvent(lane.get(), fork_.get(), 0));
    for (std::size_t c = 0; c < chunks_.size(); ++c)
      enqueue_chunk(chunks_[c], pinned_in_.get(), pinned_out_.get(),
                    lanes_[c % lanes_.size()].get());
    for (std::size_t s = 0; s < lanes_.size(); ++s) {
      GPULAB_CUDA_CHECK(cudaEventRecord(lane_done_[s].get(), lanes_[s].get()));
      GPULAB_CUDA_CHECK(cudaStreamWaitEvent(stream, lane_done_[s].get(), 0));
    }
  }

  // Computed on the first check.
  const std::vector<std::uint32_t>& reference() {
    if (reference_.empty()) {
      reference_.resize(n_);
      const Affine k = steps_of(rounds_);
      parallel_for(n_, [this, k](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) reference_[i] = k.a * pageable_in_[i] + k.c;
      });
    }
    return reference_;
  }

  std::size_t n_;
  int rounds_;
  std::vector<Chunk> chunks_;  // the non-empty ones
  std::vector<std::uint32_t> pageable_in_, pageable_out_;
  PinnedBuffer<std::uint32_t> pinned_in_, pinned_out_;
  DeviceBuffer<std::uint32_t> device_in_, device_out_;
  std::vector<CudaStream> lanes_;           // the overlapped variant's streams
  std::vector<CudaEvent> lane_done_;        // one per lane: its last chunk is done
  CudaEvent fork_{cudaEventDisableTiming};  // the work before the overlapped variant is done
  std::vector<std::uint32_t> reference_;
};

std::unique_ptr<LabRun> setup_run(const Variants& variants, const ParamValues& params,
                                  std::uint64_t seed) {
  return std::make_unique<StreamsRun>(
      variants, static_cast<std::size_t>(params.at("size")), static_cast<int>(params.at("chunks")),
      static_cast<int>(params.at("streams")), static_cast<int>(params.at("rounds")), seed);
}

std::unique_ptr<Lab> make_lab() {
  LabSpec spec;
  spec.name = "streams";
  spec.topic = "host-device copies: pinned memory, asynchronous copies, overlap with streams";
  spec.summary =
      "copy 1 GiB in, transform it, copy it back, in chunks: pageable, pinned, overlapped";
  spec.teaching_point =
      "A copy from pageable memory cannot be handed to the copy engine as it is: the driver "
      "first copies it with the CPU into a pinned staging buffer, which makes it slow and "
      "keeps the host waiting. Pinned memory is read and written by the copy engine directly, "
      "at the speed of the link, but on one stream copies and kernels still take turns. With "
      "pinned buffers, asynchronous copies and several streams, the copy engines of both "
      "directions and the SMs work at the same time, and the pipeline costs little more than "
      "its slowest stage.";
  spec.params = {
      {"size", "32-bit words copied in, transformed and copied back", 1 << 28, 1, 1 << 29, true},
      {"chunks", "pieces the data is cut into (copy in, kernel, copy out each)", 8, 1, 64, false},
      {"streams", "streams of the overlapped variant (chunk c on stream c % streams)", 4, 1, 16,
       false},
      {"rounds", "dependent generator steps per element: the kernel's length", 1024, 1, 1 << 16,
       false},
  };
  spec.traced = true;
  // A pageable launch takes ~0.6 s on the H200.
  spec.default_warmup = 1;
  spec.default_repeat = 5;
  return make_table_lab(std::move(spec), variant_table(), setup_run);
}

}  // namespace
}  // namespace gpulab::labs

GPULAB_REGISTER_LAB(gpulab::labs::make_lab)
