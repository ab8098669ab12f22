// The roofline of a report: where each variant sits between the device's memory roof (the
// measured copy bandwidth) and its FP32 peak. Arithmetic intensity is the lab's FLOP count
// (its work model) over the DRAM bytes the variant's kernels moved (counters; the work model's
// bytes when no counters were read), attained performance that FLOP count over the median time.
#pragma once

#include <string>
#include <vector>

#include "reports/device_info.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::report {

// FP32 results per clock per SM of a compute capability (CUDA C++ Programming Guide,
// "Arithmetic Instructions"), 0 where this build does not know it.
int fp32_lanes_per_sm(int cc_major, int cc_minor);

// sm_count x lanes x 2 FLOP per FMA x peak SM clock, in FLOP/s; 0 when unknown.
double fp32_peak_flops(const DeviceInfo& device);

struct RooflinePoint {
  std::string variant;
  std::string kernel;           // the function of a one-kernel variant; empty for several kernels
  double intensity = 0;         // FLOP per DRAM byte
  double attained = 0;          // FLOP/s
  bool measured_bytes = false;  // DRAM bytes from counters (else the work model's bytes)
};

// One point per variant that ran, passed and has FLOPs in its work model.
std::vector<RooflinePoint> roofline_points(const Report& report);

}  // namespace gpulab::report
