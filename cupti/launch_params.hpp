// The kernel launches CUPTI's callback API reports, and what their parameters say: which callback
// ids launch one kernel (driver and runtime), and the launch's shape. Shared by the launch
// recorder (labs) and the injection library (profiled programs).
#pragma once

#include <cupti.h>  // callback ids and the launch calls' parameter structures

#include "cupti/launch_recorder.hpp"

namespace gpulab::cupti {

// Every driver entry point that launches one kernel: libraries call them directly, and the
// runtime may call them for its own launches.
inline constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
};

// Runtime launches (triple chevrons, cudaLaunchKernel). A driver launch made inside one of these
// on the same thread is that launch seen again, not another kernel.
inline constexpr CUpti_CallbackId kRuntimeLaunches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
};

// The shape of a launch from its callback parameters; the name is left to the caller.
LaunchRecord driver_launch(CUpti_CallbackId id, const void* params);
LaunchRecord runtime_launch(CUpti_CallbackId id, const void* params);

// The function a driver launch runs; nullptr for other callback ids.
CUfunction driver_function(CUpti_CallbackId id, const void* params);

}  // namespace gpulab::cupti
