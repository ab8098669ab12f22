#include "reports/diagnosis/limits.hpp"

#include "reports/report.hpp"
#include "reports/units.hpp"

namespace gpulab::report {
namespace {

bool candidate(const Variant& v) {
  return v.status != VariantStatus::skipped && v.check.status == CheckStatus::passed &&
         v.timing.median > 0;
}

bool faster(const Variant& v, const Variant* than) {
  return !than || v.timing.median < than->timing.median;
}

}  // namespace

std::string LabLimit::limit() const { return reference ? reference->name : "copy roof"; }

LabLimit lab_limit(const Report& report) {
  LabLimit out;
  for (const auto& v : report.variants) {
    if (!candidate(v)) continue;
    const Variant*& slot = v.role == Role::reference ? out.reference : out.best;
    if (faster(v, slot)) slot = &v;
  }
  if (out.best)
    out.fraction = out.reference ? out.reference->timing.median / out.best->timing.median
                                 : out.best->roof_fraction;
  return out;
}

std::string LabLimit::text() const {
  return fraction > 0 ? units::percent(fraction) + " of " + limit() : "-";
}

}  // namespace gpulab::report
