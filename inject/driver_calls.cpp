#include "inject/driver_calls.hpp"

#include <cstddef>
#include <iterator>

namespace gpulab::inject {
namespace {

// The driver calls that close an open session first (callbacks are enabled for these alone).
// Each waits for the GPU or hands work to it in a way a session must not span: the program may
// then wait on another process that needs the counters, or run kernels that are not to be
// profiled (graphs). Asynchronous forms ("...Async") neither wait nor run kernels.
constexpr std::string_view kSessionEndingCalls[] = {"cuCtxSynchronize",
                                                    "cuStreamSynchronize",
                                                    "cuEventSynchronize",
                                                    "cuStreamQuery",
                                                    "cuEventQuery",
                                                    "cuMemcpy",
                                                    "cuMemFree",
                                                    "cuCtxDestroy",
                                                    "cuDevicePrimaryCtxRelease",
                                                    "cuDevicePrimaryCtxReset",
                                                    "cuGraphLaunch",
                                                    "cuModuleUnload",
                                                    "cuLibraryUnload"};

bool starts_with_any(std::string_view name, const std::string_view* calls, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (name.substr(0, calls[i].size()) == calls[i]) return true;
  return false;
}

}  // namespace

bool ends_a_session(std::string_view name) {
  if (name.find("Async") != std::string_view::npos) return false;
  return starts_with_any(name, std::data(kSessionEndingCalls), std::size(kSessionEndingCalls));
}

// Under batch replay every driver call ends the batch except these: launches (which join it) and
// calls that neither touch memory nor wait. A copy, a memset, an allocation, a free, a host
// function, an event or stream wait on the host all end it: the device memory saved before the
// batch is put back for each pass, so nothing that changes memory may happen inside one.
constexpr std::string_view kBatchKeepingCalls[] = {"cuLaunchKernel",
                                                   "cuLaunchCooperativeKernel",
                                                   "cuCtxGet",
                                                   "cuCtxSetCurrent",
                                                   "cuCtxPushCurrent",
                                                   "cuCtxPopCurrent",
                                                   "cuCtxSetLimit",
                                                   "cuDeviceGet",
                                                   "cuDeviceComputeCapability",
                                                   "cuDevicePrimaryCtxRetain",
                                                   "cuDevicePrimaryCtxGetState",
                                                   "cuDriverGetVersion",
                                                   "cuFuncGet",
                                                   "cuFuncSet",
                                                   "cuKernelGet",
                                                   "cuKernelSet",
                                                   "cuModuleGet",
                                                   "cuLibraryGet",
                                                   "cuPointerGet",
                                                   "cuStreamGet",
                                                   "cuStreamIsCapturing",
                                                   "cuEventRecord",
                                                   "cuStreamWaitEvent",
                                                   "cuEventCreate",
                                                   "cuStreamCreate",
                                                   "cuGetProcAddress",
                                                   "cuGetErrorString",
                                                   "cuGetErrorName",
                                                   "cuGetExportTable",
                                                   "cuOccupancy",
                                                   "cuThreadExchangeStreamCaptureMode",
                                                   "cuInit"};

bool ends_a_batch(std::string_view name) {
  return !starts_with_any(name, std::data(kBatchKeepingCalls), std::size(kBatchKeepingCalls));
}

}  // namespace gpulab::inject
