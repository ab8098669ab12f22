// Near the memory balance: the bottleneck node splits kernels at `memory_bound.dram_pct` of the
// DRAM peak, and a kernel that is not memory-bound keeps its DRAM traffic and roughly its time on
// a card of the same chip with less bandwidth, where that traffic is a larger share of the peak.
// On the labs recorded on both Hopper cards (docs/cards.md), every kernel whose verdict moved from
// latency- or compute-bound on the H200 to memory-bound on the H100 read 45-65% of the H200's
// DRAM peak; scaled by the two cards' bandwidths each comes out over the threshold and over its
// SM throughput, and of the kernels that scale flags, one did not move (59.2% on the H100, just
// under it).
#pragma once

#include <optional>
#include <string>

#include "reports/device_info.hpp"

namespace gpulab::report {

// The DRAM bandwidth of the leanest card of each chip gpulab has measured (docs/cards.md): the
// GH100 of the H100 80GB HBM3, 3,352 GB/s.
struct LeanestCard {
  const char* chip;
  int cc_major, cc_minor;  // the chip's compute capability: a report without the chip's name
                           // (`gpulab profile` records none) is matched by it
  const char* name;
  double theoretical_bandwidth;  // B/s
};
inline constexpr LeanestCard kLeanestCards[] = {{"GH100", 9, 0, "H100 80GB HBM3", 3.352e12}};

// For a kernel the bottleneck node did not call memory-bound, reading `dram_pct` of this
// device's DRAM peak and `sm_pct` of the SMs' (nullopt: not measured): where the same traffic
// over the same time would, on the leanest card of the device's chip, reach `memory_bound_pct`
// and the SMs' share (the node's memory branch there), the sentence that says so; nothing
// otherwise (a device that is the leanest card, or whose chip or bandwidth is unknown).
std::optional<std::string> memory_balance_caveat(const DeviceInfo& device, double dram_pct,
                                                 std::optional<double> sm_pct,
                                                 double memory_bound_pct);

}  // namespace gpulab::report
