// What bounds a kernel's occupancy, from its static attributes and the device: the block size
// (threads, or the SM's limit on resident blocks), registers, shared memory, or a grid with
// fewer blocks than the GPU holds at once. The occupancy node of the diagnosis names it, so that
// "low occupancy" says which change raises it.
#pragma once

#include <optional>
#include <string>

#include "reports/device_info.hpp"
#include "reports/measures.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::report {

enum class OccupancyLimiter { block_size, block_count, registers, shared_memory, grid };

struct OccupancyLimit {
  OccupancyLimiter limiter = OccupancyLimiter::block_size;
  int blocks_per_sm = 0;  // resident blocks per SM the limiter allows
  int warps_per_sm = 0;   // the warps those blocks hold
  int max_warps_per_sm = 0;
  double theoretical = 0;  // the share of the GPU's warp slots the launch can fill at once
  std::string sentence;    // e.g. "registers: 128 per thread allow 2 blocks of 256 threads per SM"
};

// The limit of the resources one SM has for blocks of this kernel (the smallest of them, ties
// named in the order block size, block count, registers, shared memory), or the grid when it
// holds fewer blocks than all SMs could keep resident. Nothing when the attributes or the
// device's limits are unknown (a library kernel whose launch gpulab did not see).
std::optional<OccupancyLimit> occupancy_limit(const StaticAttributes& kernel,
                                              const DeviceInfo& device);

// For kernels whose resources are known and whose occupancy is not (a profiled program's launch
// whose callback could not ask the driver: its activity record gave the registers and shared
// memory), the resident blocks per SM and the theoretical occupancy those resources allow, as
// the CUDA occupancy calculator works them out; the grid is left out, as the driver's own count
// leaves it out. Kernels whose occupancy is recorded are left as they are.
void complete_occupancy(Report& report);

}  // namespace gpulab::report
