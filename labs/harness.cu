#include "labs/harness.hpp"

#include <vector>

#include <fmt/format.h>

#include "reports/errors.hpp"
#include "reports/statistics.hpp"

namespace gpulab::labs {

L2Flusher::L2Flusher(std::size_t l2_bytes) : buffer_(2 * l2_bytes) {}

void L2Flusher::flush(cudaStream_t stream) {
  value_ ^= 1;  // alternate the value so no layer can skip the write as redundant
  GPULAB_CUDA_CHECK(cudaMemsetAsync(buffer_.get(), value_, buffer_.bytes(), stream));
}

report::TimingStats time_launches(const std::function<void(cudaStream_t)>& launch,
                                  cudaStream_t stream, int warmup, int repeat,
                                  L2Flusher* flusher) {
  for (int i = 0; i < warmup; ++i) launch(stream);
  GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream));

  std::vector<CudaEvent> starts(repeat), stops(repeat);
  for (int i = 0; i < repeat; ++i) {
    if (flusher) flusher->flush(stream);
    starts[i].record(stream);
    launch(stream);
    stops[i].record(stream);
  }
  std::vector<double> samples;
  samples.reserve(repeat);
  for (int i = 0; i < repeat; ++i) samples.push_back(stops[i].seconds_since(starts[i]));
  return report::summarize(std::move(samples), warmup, flusher != nullptr);
}

void poison(void* ptr, std::size_t bytes, cudaStream_t stream) {
  GPULAB_CUDA_CHECK(cudaMemsetAsync(ptr, 0xFF, bytes, stream));
}

report::StaticAttributes static_attributes(const KernelLaunch& launch, int max_warps_per_sm) {
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
  return a;
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
