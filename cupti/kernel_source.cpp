#include "cupti/kernel_source.hpp"

namespace gpulab::cupti {

std::optional<report::KernelSource> kernel_source(
    const std::string& function, const std::vector<report::InstructionRecord>& counted,
    const std::optional<PcSamples>& sampled, const CubinStore* cubins,
    const std::vector<std::string>& notes) {
  std::vector<report::InstructionRecord> records;
  const auto take = [&](const std::vector<report::InstructionRecord>& from) {
    for (const auto& r : from)
      if (r.function == function) records.push_back(r);
  };
  take(counted);
  if (sampled) take(sampled->records);
  if (records.empty()) return std::nullopt;
  report::KernelSource source = report::assemble_source(
      function, records, nullptr, cubins ? cubins->lookup() : report::LineLookup());
  source.notes = notes;
  if (!cubins || !cubins->has(records.front().cubin_crc))
    source.notes.push_back(
        "no source lines: the cubin of this function was not captured (its module loaded "
        "before gpulab began capturing, or another CUPTI client holds the callbacks)");
  if (sampled) {
    double samples = 0;
    for (const auto& r : sampled->records)
      if (r.function == function) samples += r.counters.at(report::source_counter::samples);
    source.sampling = report::StallSampling{sampled->period_cycles,
                                            static_cast<std::uint64_t>(samples), sampled->dropped};
    if (samples == 0)
      source.notes.push_back(
          "no warp-stall samples attributed to this function: it ran too briefly, or its "
          "module loaded before sampling was first enabled, and CUPTI attributes samples only "
          "to modules loaded after (in the shell, measure with --source first)");
  }
  return source;
}

}  // namespace gpulab::cupti
