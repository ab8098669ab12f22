#include "reports/diagnosis/balance.hpp"

#include <fmt/format.h>

namespace gpulab::report {

std::optional<std::string> memory_balance_caveat(const DeviceInfo& device, double dram_pct,
                                                 std::optional<double> sm_pct,
                                                 double memory_bound_pct) {
  const double bandwidth = device.roofs.theoretical_bandwidth;
  if (bandwidth <= 0) return std::nullopt;
  for (const auto& card : kLeanestCards) {
    const bool same_chip =
        device.chip.empty() ? device.cc_major == card.cc_major && device.cc_minor == card.cc_minor
                            : device.chip == card.chip;
    if (!same_chip || bandwidth <= card.theoretical_bandwidth * 1.01) continue;
    // The time stays (the kernel does not wait on DRAM), so the share grows with the ratio; the
    // kernel slows a little there too, so this is the most it reaches (docs/cards.md).
    const double there = dram_pct * bandwidth / card.theoretical_bandwidth;
    if (there < memory_bound_pct || (sm_pct && there < *sm_pct)) return std::nullopt;
    return fmt::format(
        "near the memory balance: DRAM at {:.1f}% of this card's peak ({:.0f} GB/s); the same "
        "traffic is up to {:.0f}% of an {}'s {:.0f} GB/s, over memory_bound.dram_pct ({:.0f}%){}, "
        "so there this kernel is likely memory-bound",
        dram_pct, bandwidth / 1e9, there, card.name, card.theoretical_bandwidth / 1e9,
        memory_bound_pct,
        sm_pct && *sm_pct >= memory_bound_pct ? fmt::format(" and the SMs' {:.1f}%", *sm_pct)
                                              : std::string());
  }
  return std::nullopt;
}

}  // namespace gpulab::report
