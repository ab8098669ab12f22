// From per-instruction data as the GPU delivers it (one record per function and instruction
// offset) to a kernel's `source`: the instructions of the function, each with its line and its
// counters. The records come from CUPTI (cupti/sass_metrics.hpp, cupti/pc_sampling.hpp); this
// part needs no GPU and is tested on recorded data.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/source_model.hpp"

namespace gpulab::report {

// One instruction's counters (source_counter names) in one function of one cubin.
struct InstructionRecord {
  std::uint64_t cubin_crc = 0;
  std::string function;  // mangled
  std::uint64_t offset = 0;
  std::map<std::string, double> counters;
};

// The source line of an instruction of a captured cubin; none without line information.
using LineLookup = std::function<std::optional<SourceLine>(
    std::uint64_t cubin_crc, const std::string& function, std::uint64_t offset)>;

// The `source` of `function` from the records that name it (those of other functions are
// ignored; records at one offset are added up). With `listing` (the disassembly of the same
// cubin) every instruction of the listing is kept, with its SASS text and its line, and the
// counters join it by offset; a record at an offset the listing lacks is kept too, with its
// line from `lookup`. Without a listing, the instructions are the offsets the records name,
// in order, each with its line from `lookup` and no SASS text. `origin` says where the lines
// came from.
KernelSource assemble_source(const std::string& function,
                             const std::vector<InstructionRecord>& records,
                             const KernelSource* listing, const LineLookup& lookup);

// Where two line tables of the same function disagree: the offsets whose line differs (or is
// present in one only), at most `limit` of them, each as "0x0130: a.cu:12 vs a.cu:13". Used to
// check CUPTI's correlation against nvdisasm's listing of the same cubin.
std::vector<std::string> line_disagreements(const KernelSource& listing, const LineLookup& lookup,
                                            std::uint64_t cubin_crc, std::size_t limit = 5);

}  // namespace gpulab::report
