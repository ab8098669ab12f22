#include "app/source_collector.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "cupti/cubin_store.hpp"
#include "cupti/kernel_source.hpp"
#include "cupti/pc_sampling.hpp"
#include "cupti/sass_metrics.hpp"
#include "reports/report.hpp"
#include "reports/source/collected.hpp"

namespace gpulab::app {
namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// What one variant's two launches gave.
struct Collected {
  std::vector<report::InstructionRecord> records;
  std::optional<cupti::PcSamples> sampled;
  std::vector<std::string> notes;
};

void put_on_kernels(const cupti::CubinStore* cubins, report::Report& report,
                    report::Variant& variant, const Collected& c) {
  if (c.records.empty() && (!c.sampled || c.sampled->records.empty())) {
    report.warnings.push_back(variant.name + ": no per-instruction data" +
                              (c.notes.empty() ? "" : " (" + joined(c.notes) + ")"));
    return;
  }
  std::set<std::string> done;
  for (auto& kernel : variant.kernels) {
    const std::string& function = kernel.mangled_name;
    if (function.empty()) continue;
    kernel.source = cupti::kernel_source(function, c.records, c.sampled, cubins, c.notes);
    if (kernel.source && !done.insert(function).second)
      kernel.source->notes.push_back(
          "this function runs more than once in the variant: its counters are those of every "
          "launch");
  }
}

}  // namespace

void collect_sources(Session& session, report::Report& report,
                     const std::vector<VariantLaunch>& variants) {
  std::map<const report::Variant*, Collected> collected;
  const auto note_all = [&](const std::string& note) {
    for (const auto& v : variants) collected[v.variant].notes.push_back(note);
  };
  std::string why_not;
  if (cupti::SassMetrics* sass = session.sass_metrics(why_not)) {
    if (!sass->left_out().empty())
      note_all("per-instruction counters: this GPU's CUPTI offers none for " +
               joined(sass->left_out()));
    for (const auto& v : variants) {
      v.prepare();
      collected[v.variant].records = sass->collect(v.launch);
    }
  } else {
    note_all("per-instruction counters not collected: " + why_not);
  }
  if (cupti::PcSampler* sampler = session.pc_sampler(why_not)) {
    for (const auto& v : variants) {
      v.prepare();
      collected[v.variant].sampled = sampler->sample(v.launch);
    }
  } else {
    note_all("warp-stall samples not taken: " + why_not);
  }
  const cupti::CubinStore* cubins = session.cubins();
  for (const auto& v : variants) put_on_kernels(cubins, report, *v.variant, collected[v.variant]);
}

}  // namespace gpulab::app
