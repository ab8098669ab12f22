// The GPU a report was measured on, and the roofs it is measured against: part of the report
// model (reports/report.hpp), on its own because the code that reads the device needs no more.
#pragma once

#include <cstdint>
#include <string>

namespace gpulab::report {

struct Roofs {
  double theoretical_bandwidth = 0;  // B/s: memory clock x bus width x 2 (DDR)
  double copy_bandwidth = 0;         // B/s: measured device-to-device copy, read + written bytes
  std::uint64_t copy_bytes = 0;      // size of one buffer of that measurement
};

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string chip;  // CUPTI chip name, e.g. GH100; empty when counters are unavailable
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::uint64_t global_memory_bytes = 0;
  std::uint64_t l2_bytes = 0;
  std::uint64_t shared_per_sm_bytes = 0;
  int max_warps_per_sm = 0;
  int registers_per_sm = 0;    // 0: not recorded (reports before these two were kept)
  int max_blocks_per_sm = 0;   // resident blocks an SM holds at most, whatever their size
  double sm_clock_hz = 0;      // peak
  double memory_clock_hz = 0;  // peak
  int memory_bus_bits = 0;
  int driver_version = 0;   // CUDA version the driver supports, e.g. 13000
  int runtime_version = 0;  // CUDA runtime gpulab was built with
  int cupti_version = 0;    // CUPTI API version
  Roofs roofs;
  bool counters_available = false;
  std::string counters_unavailable_reason;
};

}  // namespace gpulab::report
