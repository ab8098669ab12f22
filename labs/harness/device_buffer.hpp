// Move-only owners of device, pinned and managed memory, and of CUDA streams and events.
#pragma once

#include <cstddef>
#include <utility>

#include <cuda_runtime_api.h>

#include "labs/harness/cuda_check.hpp"

namespace gpulab::labs {

// Where a buffer's memory lives, and so how it is allocated and freed.
enum class Memory {
  device,   // cudaMalloc
  pinned,   // cudaMallocHost: page-locked host memory the copy engines read and write directly
  managed,  // cudaMallocManaged: one address for host and device, pages migrate on demand
};

template <typename T, Memory kind>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t count) : count_(count) {
    if (count == 0) return;
    void** out = reinterpret_cast<void**>(&ptr_);
    if constexpr (kind == Memory::device) GPULAB_CUDA_CHECK(cudaMalloc(out, bytes()));
    if constexpr (kind == Memory::pinned) GPULAB_CUDA_CHECK(cudaMallocHost(out, bytes()));
    if constexpr (kind == Memory::managed)
      GPULAB_CUDA_CHECK(cudaMallocManaged(out, bytes(), cudaMemAttachGlobal));
  }
  ~Buffer() { release(); }
  Buffer(Buffer&& other) noexcept { swap(other); }
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      release();
      swap(other);
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  void release() noexcept {
    if (ptr_) {
      if constexpr (kind == Memory::pinned)
        GPULAB_CUDA_CHECK_NOEXCEPT(cudaFreeHost(ptr_));
      else
        GPULAB_CUDA_CHECK_NOEXCEPT(cudaFree(ptr_));
    }
    ptr_ = nullptr;
    count_ = 0;
  }
  void swap(Buffer& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(count_, other.count_);
  }

  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

template <typename T>
using DeviceBuffer = Buffer<T, Memory::device>;
template <typename T>
using PinnedBuffer = Buffer<T, Memory::pinned>;
template <typename T>
using ManagedBuffer = Buffer<T, Memory::managed>;

// Non-blocking by default (it does not synchronize with the legacy default stream); with
// cudaStreamDefault it does, which is how a traced lab's streams stay inside the default
// stream's timing events.
class CudaStream {
 public:
  explicit CudaStream(unsigned flags = cudaStreamNonBlocking) {
    GPULAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, flags));
  }
  // On the current device; `priority` as cudaDeviceGetStreamPriorityRange gives it (lower
  // numbers first: the block scheduler starts their blocks before those of other streams).
  CudaStream(unsigned flags, int priority) {
    GPULAB_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, flags, priority));
  }
  ~CudaStream() {
    if (stream_) GPULAB_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream_));
  }
  CudaStream(CudaStream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  CudaStream& operator=(CudaStream&&) = delete;
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  cudaStream_t get() const { return stream_; }
  void synchronize() const { GPULAB_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

// With cudaEventDisableTiming, an event that only orders streams (cheaper to record and wait on).
class CudaEvent {
 public:
  explicit CudaEvent(unsigned flags = cudaEventDefault) {
    GPULAB_CUDA_CHECK(cudaEventCreateWithFlags(&event_, flags));
  }
  ~CudaEvent() {
    if (event_) GPULAB_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(event_));
  }
  CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  CudaEvent& operator=(CudaEvent&&) = delete;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  cudaEvent_t get() const { return event_; }
  void record(cudaStream_t stream) { GPULAB_CUDA_CHECK(cudaEventRecord(event_, stream)); }

  // Seconds from `start` to this event; both must have completed.
  double seconds_since(const CudaEvent& start) const {
    float ms = 0;
    GPULAB_CUDA_CHECK(cudaEventSynchronize(event_));
    GPULAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_));
    return ms * 1e-3;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace gpulab::labs
