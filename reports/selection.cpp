#include "reports/selection.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "reports/base/errors.hpp"
#include "reports/kernel_name.hpp"
#include "reports/report.hpp"

namespace gpulab::report {
namespace {

// Narrows one variant to `kernel`; false when it has no such kernel (nor timeline).
bool keep_kernel(Variant& v, const std::string& kernel) {
  if (kernel == "timeline") {
    v.kernels.clear();
    return v.timeline.has_value();
  }
  v.timeline.reset();
  v.kernels.erase(std::remove_if(v.kernels.begin(), v.kernels.end(),
                                 [&](const Kernel& k) { return !names_kernel(kernel, k.name, k.function); }),
                  v.kernels.end());
  return !v.kernels.empty();
}

}  // namespace

Report select(const Report& report, const std::vector<std::string>& variants,
              const std::string& kernel, const std::string& where) {
  for (const auto& name : variants)
    if (!report.find_variant(name)) throw UsageError(fmt::format("{} has no variant '{}'", where, name));
  Report out = report;
  out.variants.clear();
  for (const auto& v : report.variants) {
    if (!variants.empty() && std::find(variants.begin(), variants.end(), v.name) == variants.end())
      continue;
    Variant kept = v;
    if (!kernel.empty() && !keep_kernel(kept, kernel)) continue;
    out.variants.push_back(std::move(kept));
  }
  if (out.variants.empty()) {
    if (variants.size() == 1)
      throw UsageError(fmt::format("{}: variant '{}' has no kernel '{}'", where, variants[0], kernel));
    throw UsageError(fmt::format("{} has no kernel '{}'", where, kernel));
  }
  return out;
}

}  // namespace gpulab::report
