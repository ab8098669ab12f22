#include "app/device.hpp"

#include <algorithm>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "labs/harness/cuda_check.hpp"
#include "labs/harness/device_buffer.hpp"
#include "labs/harness/harness.hpp"

namespace gpulab::app {
namespace {

// The oldest architecture this binary carries code for (sm_90 SASS + compute_90 PTX).
constexpr int kMinComputeMajor = 9;

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  GPULAB_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

[[noreturn]] void no_gpu(cudaError_t err) {
  switch (err) {
    case cudaErrorInsufficientDriver:
      throw NoGpuError("no usable GPU: the NVIDIA driver (libcuda.so.1) is missing or too old "
                       "for CUDA " + std::to_string(CUDART_VERSION / 1000));
    case cudaErrorNoDevice:
      throw NoGpuError("no usable GPU: the driver reports no CUDA device");
    default:
      throw NoGpuError(fmt::format("no usable GPU: {} ({})", cudaGetErrorString(err),
                                   cudaGetErrorName(err)));
  }
}

}  // namespace

report::DeviceInfo open_device(int index) {
  int count = 0;
  if (const cudaError_t err = cudaGetDeviceCount(&count); err != cudaSuccess) no_gpu(err);
  if (count == 0) no_gpu(cudaErrorNoDevice);
  if (index < 0 || index >= count)
    throw UsageError(fmt::format("device {} does not exist ({} device(s) found)", index, count));

  GPULAB_CUDA_CHECK(cudaSetDevice(index));
  GPULAB_CUDA_CHECK(cudaFree(nullptr));  // creates the primary context now, not mid-timing

  cudaDeviceProp prop{};
  GPULAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  if (prop.major < kMinComputeMajor) {
    throw NoGpuError(fmt::format(
        "no usable GPU: {} has compute capability {}.{}; this build runs on {}.0 or newer",
        prop.name, prop.major, prop.minor, kMinComputeMajor));
  }

  report::DeviceInfo d;
  d.index = index;
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sm_count = prop.multiProcessorCount;
  d.global_memory_bytes = prop.totalGlobalMem;
  d.l2_bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
  d.shared_per_sm_bytes = prop.sharedMemPerMultiprocessor;
  d.max_warps_per_sm = prop.maxThreadsPerMultiProcessor / prop.warpSize;
  d.registers_per_sm = prop.regsPerMultiprocessor;
  d.max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
  d.sm_clock_hz = attribute(cudaDevAttrClockRate, index) * 1e3;
  d.memory_clock_hz = attribute(cudaDevAttrMemoryClockRate, index) * 1e3;
  d.memory_bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, index);
  GPULAB_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  GPULAB_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  // HBM and GDDR transfer on both clock edges: bytes/s = clock x bus bytes x 2.
  d.roofs.theoretical_bandwidth = d.memory_clock_hz * (d.memory_bus_bits / 8.0) * 2.0;
  return d;
}

bool is_sticky_cuda_error(int status) {
  switch (static_cast<cudaError_t>(status)) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

report::Roofs measure_roofs(const report::DeviceInfo& device) {
  // 1 GiB per buffer: ~17x the H200's L2, so the copy streams from and to DRAM. Smaller when
  // the device has less free memory.
  std::size_t free_bytes = 0, total_bytes = 0;
  GPULAB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t bytes = std::min<std::size_t>(std::size_t{1} << 30, free_bytes / 4);

  labs::DeviceBuffer<unsigned char> src(bytes), dst(bytes);
  GPULAB_CUDA_CHECK(cudaMemset(src.get(), 0x5A, bytes));
  labs::CudaStream stream;
  const auto copy = [&](cudaStream_t s) {
    GPULAB_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s));
  };
  const auto timing = labs::time_launches(copy, stream.get(), 3, 15, nullptr);

  report::Roofs roofs = device.roofs;
  roofs.copy_bytes = bytes;
  roofs.copy_bandwidth = 2.0 * static_cast<double>(bytes) / timing.median;
  return roofs;
}

}  // namespace gpulab::app
