// Readings more than one rule takes (reports/diagnosis/rules/): each is computed once, so that the
// rules that read it judge the same number.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/device_info.hpp"
#include "reports/diagnosis/rules/rule.hpp"
#include "reports/measures.hpp"

namespace gpulab::report::walk::rules {

// A stall reason's cycles over those of every reason; empty when either is missing.
std::optional<double> stall_fraction(const Probe& p, const char* reason);

// Bytes TMA and bulk copies move between global and shared memory, which no LSU request or
// sector counter sees, estimated from L2's byte count (readings.cpp says how); empty without the
// L2 count (it is not in the basic set).
std::optional<double> tma_bytes(const Probe& p);

// Where a memory-bound kernel stands against the measured copy roof. One reading for the at-roof
// and below-roof nodes, so that the two judge the same fraction against the same threshold: with
// a work model, the effective bandwidth (the model's bytes over the time) and whether DRAM moved
// about those bytes; without one, the DRAM bandwidth over the copy roof (dram_pct is DRAM bytes
// per second over the theoretical bandwidth), whose bytes cannot be judged. A report without
// measured roofs holds dram_pct to at_roof.dram_pct, the same fraction of a typical copy roof.
struct RoofStanding {
  std::vector<Evidence> evidence;
  std::optional<double> fraction;  // of the copy roof
  bool minimal = true;             // DRAM bytes within at_roof.dram_over_model of the model
};
RoofStanding roof_standing(const Probe& p);
// The standing's fraction reaches at_roof.roof_fraction.
bool near_roof(const Probe& p, const RoofStanding& s);

// Does one stall reason take a large share of the warps' time? Its cycles per issued
// instruction over those of every reason (warp_latency), against `threshold`; the share is the
// severity. One builder for the latency, sync and mio nodes, so they weigh alike and show the
// same evidence.
//
// With `up_to_headroom`, the severity is at most the SM's headroom: with its busiest unit at
// sm_pct of its peak, a kernel can run at most 1 - sm_pct/100 faster without taking work from
// that unit, and waiting less at barriers takes none (a warp-specialized GEMM at 88% of the SM
// peak has half its warps' cycles at barriers by design). Not for waits on a unit's own queue
// or results: there the busiest unit may be the one waited on (the constant cache of a
// divergent __constant__ index: MIO throttle 97% of the cycles at sm_pct 99.9%).
std::function<Outcome(const Probe&)> stall_share(const char* reason, const char* share_name,
                                                 const char* threshold,
                                                 bool up_to_headroom = false);

// Which resource holds occupancy down (reports/diagnosis/occupancy_limit.hpp), or, when no static
// limit does, that the blocks themselves leave the warp slots empty.
std::string occupancy_detail(const StaticAttributes& a, const DeviceInfo* device, double achieved);

// Grid blocks over what the SMs hold at once; empty when the device or the attributes are unknown.
std::optional<double> waves_of(const KernelContext& c);

// The share of SM time a partial last wave leaves idle.
double idle_last_wave(double waves);

// The lines of a finding that waits on one stall reason: where the warps' samples of it are.
LineMeasure stall_lines(const char* reason);

// A per-instruction counter, 0 where it was not collected.
double counted(const std::map<std::string, double>& counters, const char* name);

}  // namespace gpulab::report::walk::rules
