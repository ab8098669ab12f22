#include "inject/launch_copy.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

namespace gpulab::inject {
namespace {

// The parts of the three driver launch calls a copy needs, in one shape.
struct DriverLaunch {
  CUfunction function = nullptr;
  CUlaunchConfig config{};
  void** params = nullptr;
  void** extra = nullptr;
  bool cooperative = false;
};

template <typename Params>
void take_shape(DriverLaunch& l, const Params& p) {
  l.function = p.f;
  l.config.gridDimX = p.gridDimX, l.config.gridDimY = p.gridDimY, l.config.gridDimZ = p.gridDimZ;
  l.config.blockDimX = p.blockDimX, l.config.blockDimY = p.blockDimY;
  l.config.blockDimZ = p.blockDimZ;
  l.config.sharedMemBytes = p.sharedMemBytes;
  l.config.hStream = p.hStream;
  l.params = p.kernelParams;
}

std::optional<DriverLaunch> read_driver_launch(CUpti_CallbackId id, const void* params) {
  DriverLaunch l;
  switch (id) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
      const auto& p = *static_cast<const cuLaunchKernel_params*>(params);
      take_shape(l, p);
      l.extra = p.extra;
      return l;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      take_shape(l, *static_cast<const cuLaunchCooperativeKernel_params*>(params));
      l.cooperative = true;
      return l;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      const auto& p = *static_cast<const cuLaunchKernelEx_params*>(params);
      if (!p.config) return std::nullopt;
      l.function = p.f;
      l.config = *p.config;
      l.params = p.kernelParams;
      l.extra = p.extra;
      return l;
    }
    default:
      return std::nullopt;
  }
}

// Where each parameter of `function` lies in its argument block, and how large it is. Since
// CUDA 12 a launch may pass a CUkernel where a CUfunction is expected; its own query answers then.
bool parameter_layout(CUfunction function, std::vector<std::size_t>& offsets,
                      std::vector<std::size_t>& sizes) {
  using Query = std::function<CUresult(std::size_t, std::size_t*, std::size_t*)>;
  const Query as_function = [&](std::size_t i, std::size_t* o, std::size_t* s) {
    return cuFuncGetParamInfo(function, i, o, s);
  };
  const Query as_kernel = [&](std::size_t i, std::size_t* o, std::size_t* s) {
    return cuKernelGetParamInfo(reinterpret_cast<CUkernel>(function), i, o, s);
  };
  for (const Query& query : {as_function, as_kernel}) {
    offsets.clear(), sizes.clear();
    // The driver limits a launch's arguments to 32,764 bytes: far fewer parameters than this.
    for (std::size_t i = 0; i < 32768; ++i) {
      std::size_t offset = 0, size = 0;
      const CUresult r = query(i, &offset, &size);
      if (r == CUDA_ERROR_INVALID_VALUE) return true;  // past the last parameter
      if (r != CUDA_SUCCESS) break;
      offsets.push_back(offset), sizes.push_back(size);
    }
  }
  return false;
}

}  // namespace

std::optional<LaunchCopy> LaunchCopy::of_driver_launch(CUpti_CallbackId id, const void* params,
                                                       std::string& why_not) {
  const std::optional<DriverLaunch> launch = read_driver_launch(id, params);
  if (!launch || !launch->function) {
    why_not = "the launch's parameters could not be read";
    return std::nullopt;
  }
  LaunchCopy copy;
  copy.function_ = launch->function;
  copy.config_ = launch->config;
  if (launch->config.attrs && launch->config.numAttrs > 0)
    copy.attributes_.assign(launch->config.attrs, launch->config.attrs + launch->config.numAttrs);
  copy.config_.attrs = nullptr, copy.config_.numAttrs = 0;
  if (launch->cooperative) {
    CUlaunchAttribute cooperative{};
    cooperative.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    cooperative.value.cooperative = 1;
    copy.attributes_.push_back(cooperative);
  }

  if (launch->params) {
    std::vector<std::size_t> sizes;
    if (!parameter_layout(launch->function, copy.offsets_, sizes)) {
      why_not = "the driver does not give the sizes of the kernel's parameters";
      return std::nullopt;
    }
    std::size_t end = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) end = std::max(end, copy.offsets_[i] + sizes[i]);
    copy.arguments_.assign(end, 0);
    for (std::size_t i = 0; i < sizes.size(); ++i)
      std::memcpy(copy.arguments_.data() + copy.offsets_[i], launch->params[i], sizes[i]);
    return copy;
  }
  // The other way to pass arguments: one packed buffer and its size, in `extra`.
  const void* buffer = nullptr;
  const std::size_t* buffer_size = nullptr;
  for (void** e = launch->extra; e && *e != CU_LAUNCH_PARAM_END; e += 2) {
    if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
      buffer = e[1];
    } else if (e[0] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
      buffer_size = static_cast<const std::size_t*>(e[1]);
    } else {
      why_not = "the launch passes its arguments in a form gpulab does not copy";
      return std::nullopt;
    }
  }
  if (buffer && buffer_size) {
    const auto* bytes = static_cast<const unsigned char*>(buffer);
    copy.arguments_.assign(bytes, bytes + *buffer_size);
    copy.packed_ = true;
  }
  return copy;  // or a kernel without parameters
}

CUresult LaunchCopy::issue() const {
  CUlaunchConfig config = config_;
  config.attrs = attributes_.empty() ? nullptr : const_cast<CUlaunchAttribute*>(attributes_.data());
  config.numAttrs = static_cast<unsigned int>(attributes_.size());
  // The driver reads the argument bytes through non-const pointers; it does not write them.
  auto* bytes = const_cast<unsigned char*>(arguments_.data());
  if (packed_) {
    std::size_t size = arguments_.size();
    void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, bytes, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    return cuLaunchKernelEx(&config, function_, nullptr, extra);
  }
  std::vector<void*> params(offsets_.size());
  for (std::size_t i = 0; i < params.size(); ++i) params[i] = bytes + offsets_[i];
  return cuLaunchKernelEx(&config, function_, params.empty() ? nullptr : params.data(), nullptr);
}

}  // namespace gpulab::inject
