// Move-only owners of device memory and of CUDA streams and events.
#pragma once

#include <cstddef>
#include <utility>

#include <cuda_runtime_api.h>

#include "labs/cuda_check.hpp"

namespace gpulab::labs {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count > 0) GPULAB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), bytes()));
  }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      swap(other);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  void release() noexcept {
    if (ptr_) GPULAB_CUDA_CHECK_NOEXCEPT(cudaFree(ptr_));
    ptr_ = nullptr;
    count_ = 0;
  }
  void swap(DeviceBuffer& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(count_, other.count_);
  }

  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

class CudaStream {
 public:
  CudaStream() { GPULAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
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

class CudaEvent {
 public:
  CudaEvent() { GPULAB_CUDA_CHECK(cudaEventCreate(&event_)); }
  ~CudaEvent() {
    if (event_) GPULAB_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(event_));
  }
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
