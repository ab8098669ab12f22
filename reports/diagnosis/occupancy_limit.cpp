#include "reports/diagnosis/occupancy_limit.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "reports/report.hpp"
#include "reports/units.hpp"

namespace gpulab::report {
namespace {

// Limits of compute capabilities whose reports predate DeviceInfo::registers_per_sm and
// max_blocks_per_sm (the CUDA C++ Programming Guide, "Technical Specifications per Compute
// Capability"): 64 K registers per SM from 5.0 on; resident blocks per SM by capability.
int registers_per_sm(const DeviceInfo& d) {
  if (d.registers_per_sm > 0) return d.registers_per_sm;
  return d.cc_major >= 5 ? 65536 : 0;
}

int max_blocks_per_sm(const DeviceInfo& d) {
  if (d.max_blocks_per_sm > 0) return d.max_blocks_per_sm;
  switch (d.cc_major * 10 + d.cc_minor) {
    case 70:
    case 80:
    case 90:
      return 32;
    case 75:
    case 86:
    case 87:
      return 16;
    case 89:
      return 24;
    default:
      return 0;  // not known here: the occupancy node then names no limiter
  }
}

// Registers are allocated per warp in units of 256 (8 per thread); shared memory per block in
// units of 128 bytes, plus the 1 KB the system reserves per block from compute capability 8.0.
constexpr int kRegisterUnit = 256;
constexpr std::uint64_t kSharedUnit = 128;
constexpr std::uint64_t kSharedReservedPerBlock = 1024;

std::uint64_t round_up(std::uint64_t value, std::uint64_t unit) {
  return (value + unit - 1) / unit * unit;
}

}  // namespace

std::optional<OccupancyLimit> occupancy_limit(const StaticAttributes& a, const DeviceInfo& d) {
  const int regs_per_sm = registers_per_sm(d), blocks_limit = max_blocks_per_sm(d);
  if (a.block_threads <= 0 || d.max_warps_per_sm <= 0 || d.sm_count <= 0 || regs_per_sm <= 0 ||
      blocks_limit <= 0)
    return std::nullopt;
  const int warps_per_block = (a.block_threads + 31) / 32;

  // Blocks per SM as each resource allows, in the order a tie is named.
  std::vector<std::pair<OccupancyLimiter, int>> limits;
  limits.emplace_back(OccupancyLimiter::block_size, d.max_warps_per_sm / warps_per_block);
  limits.emplace_back(OccupancyLimiter::block_count, blocks_limit);
  if (a.registers_per_thread > 0) {
    const int per_warp = static_cast<int>(
        round_up(static_cast<std::uint64_t>(a.registers_per_thread) * 32, kRegisterUnit));
    limits.emplace_back(OccupancyLimiter::registers, regs_per_sm / per_warp / warps_per_block);
  }
  const std::uint64_t shared = a.static_shared_bytes + a.dynamic_shared_bytes;
  if (shared > 0 && d.shared_per_sm_bytes > 0) {
    const std::uint64_t per_block =
        round_up(shared, kSharedUnit) + (d.cc_major >= 8 ? kSharedReservedPerBlock : 0);
    limits.emplace_back(OccupancyLimiter::shared_memory,
                        static_cast<int>(d.shared_per_sm_bytes / per_block));
  }
  const auto smallest =
      std::min_element(limits.begin(), limits.end(),
                       [](const auto& x, const auto& y) { return x.second < y.second; });

  OccupancyLimit out;
  out.limiter = smallest->first;
  // The runtime's own count (cudaOccupancyMaxActiveBlocksPerMultiprocessor), when recorded, is
  // the truth; the resources above say which one it reflects.
  out.blocks_per_sm =
      a.max_active_blocks_per_sm > 0 ? a.max_active_blocks_per_sm : smallest->second;
  out.max_warps_per_sm = d.max_warps_per_sm;
  const std::string blocks = fmt::format("{} block{} of {} threads per SM", out.blocks_per_sm,
                                         out.blocks_per_sm == 1 ? "" : "s", a.block_threads);
  switch (out.limiter) {
    case OccupancyLimiter::block_size:
      out.sentence = fmt::format("block size: {} warps per SM hold {}", d.max_warps_per_sm, blocks);
      break;
    case OccupancyLimiter::block_count:
      out.sentence = fmt::format("block size: an SM keeps at most {} blocks resident, {}",
                                 blocks_limit, blocks);
      break;
    case OccupancyLimiter::registers:
      out.sentence =
          fmt::format("registers: {} per thread allow {}", a.registers_per_thread, blocks);
      break;
    case OccupancyLimiter::shared_memory:
      out.sentence = fmt::format("shared memory: {} per block allow {}",
                                 units::bytes(static_cast<double>(shared)), blocks);
      break;
    case OccupancyLimiter::grid:
      break;
  }

  // A grid smaller than what the SMs hold at once leaves SMs or warp slots empty whatever the
  // per-SM limit: that is the limit then.
  const std::uint64_t resident = static_cast<std::uint64_t>(d.sm_count) * out.blocks_per_sm;
  if (a.grid_blocks > 0 && a.grid_blocks < resident) {
    out.limiter = OccupancyLimiter::grid;
    const double per_sm = static_cast<double>(a.grid_blocks) / d.sm_count;
    out.blocks_per_sm = std::max(1, static_cast<int>(per_sm));
    out.sentence = fmt::format("grid: {} block{} for {} SMs that hold {} at once", a.grid_blocks,
                               a.grid_blocks == 1 ? "" : "s", d.sm_count, resident);
  }
  out.warps_per_sm = std::min(d.max_warps_per_sm, out.blocks_per_sm * warps_per_block);
  out.theoretical = static_cast<double>(out.warps_per_sm) / d.max_warps_per_sm;
  // A small grid fills some SMs and leaves the others empty: its share is of the whole GPU.
  if (out.limiter == OccupancyLimiter::grid)
    out.theoretical = static_cast<double>(a.grid_blocks * warps_per_block) /
                      (static_cast<double>(d.sm_count) * d.max_warps_per_sm);
  return out;
}

void complete_occupancy(Report& report) {
  for (auto& v : report.variants)
    for (auto& k : v.kernels) {
      StaticAttributes& a = k.attributes;
      if (a.registers_per_thread <= 0 || a.max_active_blocks_per_sm > 0) continue;
      StaticAttributes per_sm = a;
      per_sm.grid_blocks = 0;
      if (const auto limit = occupancy_limit(per_sm, report.device)) {
        a.max_active_blocks_per_sm = limit->blocks_per_sm;
        a.theoretical_occupancy = limit->theoretical;
      }
    }
}

}  // namespace gpulab::report
