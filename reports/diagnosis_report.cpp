// Diagnoses across a report: every kernel's and timeline's, and what the rest of gpulab asks of
// them (a variant's diagnoses, its principal finding). The trees themselves are in
// reports/decision_tree.cpp and reports/timeline_diagnosis.cpp.
#include <algorithm>

#include "reports/diagnosis.hpp"
#include "reports/metric_catalogue.hpp"

namespace gpulab::report {
namespace {

// Profiled duration: what makes a kernel the variant's longest.
double longest_duration(const Kernel& k) {
  auto it = k.metrics.find(metrics::name::duration);
  return it == k.metrics.end() ? 0 : it->second;
}

// Both constnesses of diagnoses_of: V is Variant or const Variant, D Diagnosis likewise.
template <typename D, typename V>
std::vector<D*> collect_diagnoses(V& variant) {
  std::vector<D*> out;
  if (variant.timeline && variant.timeline->diagnosis) out.push_back(&*variant.timeline->diagnosis);
  for (auto& k : variant.kernels)
    if (k.diagnosis) out.push_back(&*k.diagnosis);
  return out;
}

}  // namespace

void diagnose_report(Report& report, const Thresholds& thresholds) {
  for (auto& v : report.variants) {
    if (v.status == VariantStatus::skipped) continue;
    const WorkModel* model = v.kernels.size() == 1 ? &report.work_of(v) : nullptr;
    for (auto& k : v.kernels) {
      if (k.metrics.empty()) continue;  // no counters: nothing to walk
      KernelContext c{&k, &v, model, &report.device};
      k.diagnosis = diagnose(c, thresholds);
    }
    if (v.timeline) v.timeline->diagnosis = diagnose_timeline(*v.timeline, thresholds);
  }
}

std::vector<const Diagnosis*> diagnoses_of(const Variant& variant) {
  return collect_diagnoses<const Diagnosis>(variant);
}

std::vector<Diagnosis*> diagnoses_of(Variant& variant) {
  return collect_diagnoses<Diagnosis>(variant);
}

bool has_diagnosis(const Variant& variant) {
  return !diagnoses_of(variant).empty();
}

bool has_diagnosis(const Report& report) {
  return std::any_of(report.variants.begin(), report.variants.end(),
                     [](const Variant& v) { return has_diagnosis(v); });
}

// The timeline's principal finding says where the whole variant's time goes; that of the
// longest kernel, what limits the kernel. The higher score is the variant's.
std::string principal_finding(const Variant& variant) {
  const Finding* best = nullptr;
  const Kernel* longest = nullptr;
  for (const auto& k : variant.kernels)
    if (k.diagnosis && (!longest || longest_duration(k) > longest_duration(*longest))) longest = &k;
  if (longest && !longest->diagnosis->findings.empty())
    best = &longest->diagnosis->findings.front();
  if (variant.timeline && variant.timeline->diagnosis &&
      !variant.timeline->diagnosis->findings.empty()) {
    const Finding& f = variant.timeline->diagnosis->findings.front();
    if (!best || f.score > best->score) best = &f;
  }
  return best ? best->id : "";
}

bool carries_finding(const Variant& variant, const std::string& finding_id) {
  for (const Diagnosis* d : diagnoses_of(variant))
    for (const auto& f : d->findings)
      if (f.id == finding_id) return true;
  return false;
}

}  // namespace gpulab::report
