// One function's `source` from what a patched run and a sampled run of the same work gave (the
// lab collector, app/source_collector.hpp, and the injection's --source replay share it): its
// instructions with their lines from the captured cubins, its stall sampling, and a note for
// each thing that could not be had.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cupti/cubin_store.hpp"
#include "cupti/pc_sampling.hpp"
#include "reports/source/collected.hpp"

namespace gpulab::cupti {

// `counted` holds the patched run's records of every function; `sampled` the sampled run's,
// when it was taken; `notes` what was not collected for every function of the work. Empty when
// neither run holds a record of `function`.
std::optional<report::KernelSource> kernel_source(
    const std::string& function, const std::vector<report::InstructionRecord>& counted,
    const std::optional<PcSamples>& sampled, const CubinStore* cubins,
    const std::vector<std::string>& notes);

}  // namespace gpulab::cupti
