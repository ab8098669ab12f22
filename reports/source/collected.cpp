#include "reports/source/collected.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace gpulab::report {
namespace {

std::string describe(const std::optional<SourceLine>& where) {
  if (!where) return "no line";
  return fmt::format("{}:{}", where->file, where->line);
}

// A line lookup's answer compared with the listing's: the listing also names the call site of
// inlined code, which CUPTI's correlation does not; the inlined function's own line is what
// both give.
bool same_line(const std::optional<SourceLine>& a, const std::optional<SourceLine>& b) {
  if (!a || !b) return !a && !b;
  return a->file == b->file && a->line == b->line;
}

}  // namespace

KernelSource assemble_source(const std::string& function,
                             const std::vector<InstructionRecord>& records,
                             const KernelSource* listing, const LineLookup& lookup) {
  std::map<std::uint64_t, std::map<std::string, double>> by_offset;
  std::uint64_t crc = 0;
  for (const auto& r : records) {
    if (r.function != function) continue;
    crc = r.cubin_crc;
    auto& counters = by_offset[r.offset];
    for (const auto& [name, value] : r.counters) counters[name] += value;
  }

  KernelSource out;
  out.function = function;
  out.origin = listing ? "nvdisasm" : "cupti";
  if (listing) {
    out.instructions = listing->instructions;
    for (auto& i : out.instructions) {
      auto it = by_offset.find(i.offset);
      if (it == by_offset.end()) continue;
      i.counters = std::move(it->second);
      by_offset.erase(it);
    }
  }
  // Offsets the listing lacks (or every offset, without one).
  for (auto& [offset, counters] : by_offset) {
    SassInstruction i;
    i.offset = offset;
    if (lookup) i.where = lookup(crc, function, offset);
    i.counters = std::move(counters);
    out.instructions.push_back(std::move(i));
  }
  std::stable_sort(
      out.instructions.begin(), out.instructions.end(),
      [](const SassInstruction& a, const SassInstruction& b) { return a.offset < b.offset; });
  return out;
}

std::vector<std::string> line_disagreements(const KernelSource& listing, const LineLookup& lookup,
                                            std::uint64_t cubin_crc, std::size_t limit) {
  std::vector<std::string> out;
  for (const auto& i : listing.instructions) {
    const auto other = lookup(cubin_crc, listing.function, i.offset);
    if (same_line(i.where, other)) continue;
    if (out.size() < limit)
      out.push_back(fmt::format("{:#06x}: {} vs {}", i.offset, describe(i.where), describe(other)));
    else
      break;
  }
  return out;
}

}  // namespace gpulab::report
