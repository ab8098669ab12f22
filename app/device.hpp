// The GPU gpulab runs on: its properties and its measured memory roof.
#pragma once

#include "reports/device_info.hpp"

namespace gpulab::app {

// Selects device `index`, creates its primary context and reads its properties. Throws
// NoGpuError (one line: what is missing) when there is no driver, no device, or a device
// this build has no code for.
report::DeviceInfo open_device(int index);

// Device-to-device copy bandwidth (bytes read + written per second) of cudaMemcpy over two
// large buffers, median of several copies; the roof effective bandwidths are compared with.
report::Roofs measure_roofs(const report::DeviceInfo& device);

// True for CUDA errors after which the context cannot be used again (a faulting kernel): the
// process must be restarted.
bool is_sticky_cuda_error(int status);

}  // namespace gpulab::app
