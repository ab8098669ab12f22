// What the outside corpus's CUDA programs share: checked CUDA calls, device buffers, seeded
// random inputs and the steps each program runs. A program whose library call went wrong, or
// whose result is wrong, exits non-zero: a report recorded from a broken run must not enter the
// corpus, and `gpulab profile` and ncu both pass the program's status on.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// CUDA calls are checked as the profile test programs check theirs: exit 90 on an error.
#include "../apps/app_check.cuh"

// A library call's status checked as APP_CHECK checks CUDA's: where it is not `ok`, exit 90
// naming the call and what `describe` says of the status (a function of it giving text).
#define OUTSIDE_CHECK(call, ok, describe)                                \
  do {                                                                   \
    const auto outside_status_ = (call);                                 \
    if (outside_status_ != (ok)) {                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                   std::string(describe(outside_status_)).c_str());      \
      std::exit(90);                                                     \
    }                                                                    \
  } while (0)

namespace outside {

// The status of a library without a text for it (cuFFT, cuRAND): its number.
template <typename Status>
std::string status_number(Status status) {
  return "status " + std::to_string(static_cast<int>(status));
}

// A step names the library call it makes, so that a run's output says which launches belong to
// which call (tests/fixtures/outside/LABELING.md lists them in this order).
inline void begin_step(const char* name) {
  std::printf("step %s\n", name);
  std::fflush(stdout);
}

// Waits for the step's kernels, so that an asynchronous fault is reported by the step that
// caused it and the result is complete before it is checked.
inline void end_step() {
  APP_CHECK(cudaGetLastError());
  APP_CHECK(cudaDeviceSynchronize());
}

// A wrong result ends the program with status 91, naming the step and what was wrong.
inline void expect(bool ok, const char* step, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "step %s: wrong result: %s\n", step, what);
  std::exit(91);
}

template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    APP_CHECK(cudaMalloc(&data_, count * sizeof(T)));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() {
    if (data_) {
      const cudaError_t status = cudaFree(data_);
      if (status != cudaSuccess) std::fprintf(stderr, "cudaFree: %s\n", cudaGetErrorString(status));
    }
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return data_; }
  std::size_t size() const { return count_; }

  void upload(const std::vector<T>& host) {
    APP_CHECK(cudaMemcpy(data_, host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    APP_CHECK(cudaMemcpy(host.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
  T download_one(std::size_t index) const {
    T value;
    APP_CHECK(cudaMemcpy(&value, data_ + index, sizeof(T), cudaMemcpyDeviceToHost));
    return value;
  }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// Inputs are seeded random numbers, made on the host so that no kernel of our own appears among
// the library's in the recorded report. SplitMix64: fast enough for hundreds of millions of
// values, and the same sequence on every machine. Not zeros: a library may take shortcuts on
// them, and a result of zeros would pass a careless check.
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint32_t below(std::uint32_t bound) {
    return static_cast<std::uint32_t>((next() >> 32) * bound >> 32);
  }
  // Uniform in [-1, 1): 24 random bits, so every value is a float exactly.
  float symmetric() {
    return static_cast<float>(static_cast<std::int64_t>(next() >> 40) - (1 << 23)) / (1 << 23);
  }

 private:
  std::uint64_t state_;
};

inline std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  Random r(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = r.symmetric();
  return v;
}

inline std::vector<std::uint32_t> random_words(std::size_t n, std::uint64_t seed) {
  Random r(seed);
  std::vector<std::uint32_t> v(n);
  for (auto& x : v) x = static_cast<std::uint32_t>(r.next());
  return v;
}

// Temporary storage of a CUB call, sized by the call itself (its first, null-storage form).
class TempStorage {
 public:
  explicit TempStorage(std::size_t bytes) : bytes_(bytes) {
    APP_CHECK(cudaMalloc(&data_, bytes_ > 0 ? bytes_ : 1));
  }
  ~TempStorage() {
    if (data_) {
      const cudaError_t status = cudaFree(data_);
      if (status != cudaSuccess) std::fprintf(stderr, "cudaFree: %s\n", cudaGetErrorString(status));
    }
  }
  TempStorage(const TempStorage&) = delete;
  TempStorage& operator=(const TempStorage&) = delete;
  void* get() const { return data_; }
  std::size_t& bytes() { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace outside
