#include "labs/harness/harness.hpp"

#include <chrono>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "labs/harness/ptxas_table.hpp"
#include "reports/base/errors.hpp"
#include "reports/statistics.hpp"

namespace gpulab::labs {

namespace {

// Reads `n` 16-byte words and writes nothing unless their sum hits a value it never does (the
// condition keeps the loads alive). Reading twice the L2's size evicts every line, and the
// dirty lines of the previous kernel are written back now, during the flush, instead of during
// the kernel that is measured next.
__global__ void read_to_evict(const uint4* __restrict__ data, std::size_t n, unsigned* sink) {
  unsigned sum = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const uint4 v = data[i];
    sum += v.x ^ v.y ^ v.z ^ v.w;
  }
  if (sum == 0xFFFFFFFFu) *sink = sum;
}

}  // namespace

// A write-based flush (cudaMemset) would leave L2 full of dirty lines that the next kernel
// pays to write back: +11% DRAM write bytes and +8% duration in the H200 transpose, measured.
L2Flusher::L2Flusher(std::size_t l2_bytes)
    : buffer_((2 * l2_bytes + sizeof(uint4) - 1) / sizeof(uint4)), sink_(1) {
  GPULAB_CUDA_CHECK(cudaMemset(buffer_.get(), 0x3C, buffer_.bytes()));
  int device = 0;
  GPULAB_CUDA_CHECK(cudaGetDevice(&device));
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&blocks_, cudaDevAttrMultiProcessorCount, device));
  blocks_ *= 4;
}

void L2Flusher::flush(cudaStream_t stream) {
  read_to_evict<<<blocks_, 512, 0, stream>>>(buffer_.get(), buffer_.size(), sink_.get());
  GPULAB_CUDA_CHECK_LAUNCH();
}

namespace {

// Queues `count` timed launches, each between a pair of CUDA events (after prepare() and an L2
// flush where given, both outside the events), then waits for them and returns their durations.
class TimedBatch {
 public:
  TimedBatch(const std::function<void(cudaStream_t)>& launch, cudaStream_t stream,
             L2Flusher* flusher, const std::function<void()>& prepare)
      : launch_(launch), stream_(stream), flusher_(flusher), prepare_(prepare) {}

  void prepare_next() const {
    if (!prepare_) return;
    GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    prepare_();
  }

  void warm_up(int count) const {
    for (int i = 0; i < count; ++i) {
      prepare_next();
      launch_(stream_);
    }
    GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  std::vector<double> time(int count) {
    // Events are kept from batch to batch: a batch of adaptive timing reuses the last's.
    if (starts_.size() < static_cast<std::size_t>(count)) {
      starts_.resize(count);
      stops_.resize(count);
    }
    for (int i = 0; i < count; ++i) {
      prepare_next();
      if (flusher_) flusher_->flush(stream_);
      starts_[i].record(stream_);
      launch_(stream_);
      stops_[i].record(stream_);
    }
    std::vector<double> samples;
    samples.reserve(count);
    for (int i = 0; i < count; ++i) samples.push_back(stops_[i].seconds_since(starts_[i]));
    return samples;
  }

 private:
  const std::function<void(cudaStream_t)>& launch_;
  cudaStream_t stream_;
  L2Flusher* flusher_;
  const std::function<void()>& prepare_;
  std::vector<CudaEvent> starts_, stops_;
};

}  // namespace

report::TimingStats time_launches(const std::function<void(cudaStream_t)>& launch,
                                  cudaStream_t stream, int warmup, int repeat, L2Flusher* flusher,
                                  const std::function<void()>& prepare) {
  TimedBatch batch(launch, stream, flusher, prepare);
  batch.warm_up(warmup);
  return report::summarize(batch.time(repeat), warmup, flusher != nullptr);
}

report::TimingStats time_until_quiet(const std::function<void(cudaStream_t)>& launch,
                                     cudaStream_t stream, int warmup, const report::NoiseRule& rule,
                                     L2Flusher* flusher, const std::function<void()>& prepare) {
  TimedBatch batch(launch, stream, flusher, prepare);
  batch.warm_up(warmup);
  const auto began = std::chrono::steady_clock::now();
  auto quiet = report::sample_until_quiet(
      rule, [&](int count) { return batch.time(count); },
      [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      });
  auto stats = report::summarize(std::move(quiet.samples), warmup, flusher != nullptr);
  switch (quiet.stopped) {
    case report::StopReason::noise:
      stats.stopped = report::TimingStop::noise;
      break;
    case report::StopReason::settled:
      stats.stopped = report::TimingStop::settled;
      break;
    default:
      stats.stopped = report::TimingStop::timeout;
  }
  return stats;
}

report::Check check_result(const float* result, const std::vector<float>& ref, Tolerance tol) {
  // Left uninitialized: the copy writes every element (a vector would write 4 bytes per element
  // twice, a GiB a check at the default sizes).
  std::unique_ptr<float[]> got(new float[ref.size()]);
  GPULAB_CUDA_CHECK(
      cudaMemcpy(got.get(), result, ref.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return compare(got.get(), ref.data(), ref.size(), tol);
}

void poison(void* ptr, std::size_t bytes, cudaStream_t stream) {
  GPULAB_CUDA_CHECK(cudaMemsetAsync(ptr, 0xFF, bytes, stream));
}

report::StaticAttributes static_attributes(const KernelLaunch& launch, int max_warps_per_sm) {
  if (launch.function == nullptr) return {};  // a library's kernel: nothing to ask about
  cudaFuncAttributes attr{};
  GPULAB_CUDA_CHECK(cudaFuncGetAttributes(&attr, launch.function));
  const int threads = static_cast<int>(launch.block.x * launch.block.y * launch.block.z);
  int blocks_per_sm = 0;
  GPULAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks_per_sm, launch.function, threads, launch.dynamic_shared_bytes));

  report::StaticAttributes a;
  a.registers_per_thread = attr.numRegs;
  a.local_bytes_per_thread = attr.localSizeBytes;
  a.static_shared_bytes = attr.sharedSizeBytes;
  a.dynamic_shared_bytes = launch.dynamic_shared_bytes;
  a.block_threads = threads;
  a.grid_blocks = static_cast<std::uint64_t>(launch.grid.x) * launch.grid.y * launch.grid.z;
  a.max_active_blocks_per_sm = blocks_per_sm;
  const int warps_per_block = (threads + 31) / 32;
  if (max_warps_per_sm > 0)
    a.theoretical_occupancy =
        static_cast<double>(blocks_per_sm * warps_per_block) / max_warps_per_sm;

  // The runtime names the kernel as ptxas did (mangled), which is the table's key.
  if (const auto ptxas = ptxas_record(mangled_name(launch))) {
    a.spill_store_bytes = ptxas->spill_store_bytes;
    a.spill_load_bytes = ptxas->spill_load_bytes;
    a.stack_frame_bytes = ptxas->stack_frame_bytes;
  }
  return a;
}

std::string mangled_name(const KernelLaunch& launch) {
  if (launch.function == nullptr) return {};
  const char* name = nullptr;
  GPULAB_CUDA_CHECK(cudaFuncGetName(&name, launch.function));
  return name ? name : "";
}

void require_device_memory(std::size_t bytes, const char* what) {
  std::size_t free_bytes = 0, total_bytes = 0;
  GPULAB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (bytes > free_bytes) {
    throw UsageError(fmt::format("{} needs {:.2f} GB of device memory; {:.2f} GB are free", what,
                                 bytes / 1e9, free_bytes / 1e9));
  }
}

}  // namespace gpulab::labs
