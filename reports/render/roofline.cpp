#include "reports/render/roofline.hpp"

#include <cmath>

#include "reports/kernel_name.hpp"
#include "reports/report.hpp"

namespace gpulab::report {

int fp32_lanes_per_sm(int cc_major, int cc_minor) {
  switch (cc_major) {
    case 7:
      return 64;
    case 8:
      return cc_minor == 0 ? 64 : 128;
    case 9:
    case 10:
    case 12:
      return 128;
    default:
      return 0;
  }
}

double fp32_peak_flops(const DeviceInfo& device) {
  return 2.0 * device.sm_count * fp32_lanes_per_sm(device.cc_major, device.cc_minor) *
         device.sm_clock_hz;
}

std::vector<RooflinePoint> roofline_points(const Report& report) {
  std::vector<RooflinePoint> points;
  for (const auto& v : report.variants) {
    const WorkModel& work = report.work_of(v);
    if (v.status != VariantStatus::ok || v.check.status == CheckStatus::failed || work.flops <= 0 ||
        v.timing.median <= 0)
      continue;
    double dram = 0;
    for (const auto& k : v.kernels) {
      const auto it = k.derived.find("dram_bytes");
      if (it != k.derived.end()) dram += it->second;
    }
    RooflinePoint p;
    p.variant = v.name;
    if (v.kernels.size() == 1)
      p.kernel =
          v.kernels[0].function.empty() ? v.kernels[0].name : display_name(v.kernels[0].function);
    p.measured_bytes = dram > 0;
    const double bytes = p.measured_bytes ? dram : work.bytes();
    if (bytes <= 0) continue;
    p.intensity = work.flops / bytes;
    p.attained = work.flops / v.timing.median;
    // A point a log-log chart can place: positive, finite and not denormal (1e-320 FLOP).
    if (!std::isnormal(p.intensity) || !std::isnormal(p.attained)) continue;
    points.push_back(p);
  }
  return points;
}

}  // namespace gpulab::report
