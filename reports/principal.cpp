#include "reports/principal.hpp"

#include <algorithm>

#include "reports/metric_catalogue.hpp"
#include "reports/nvtx_filter.hpp"
#include "reports/report.hpp"

namespace gpulab::report {
namespace {

double duration_of(const Kernel& k) {
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

// Keeps the candidate of highest weight; on a tie, the first considered.
void consider(Principal& best, const Finding& f, const std::string& where, double share) {
  const double weight = f.score * share;
  if (best.finding.empty() || weight > best.weight) best = {f.id, where, share, weight};
}

bool undiagnosed(const Kernel& k) { return !k.metrics.empty() && !k.diagnosis; }

}  // namespace

const std::string& function_key(const Kernel& k) {
  if (!k.mangled_name.empty()) return k.mangled_name;
  return k.function.empty() ? k.name : k.function;
}

std::optional<double> function_share(const Variant& variant, const Kernel& kernel) {
  if (variant.totals) return variant.totals->share_of_gpu_time;
  double total = 0, mine = 0;
  const std::string& key = function_key(kernel);
  for (const auto& k : variant.kernels) {
    total += duration_of(k);
    if (function_key(k) == key) mine += duration_of(k);
  }
  if (total <= 0 || duration_of(kernel) <= 0) return std::nullopt;
  return mine / total;
}

std::vector<const Diagnosis*> diagnoses_of(const Variant& variant) {
  return collect_diagnoses<const Diagnosis>(variant);
}

std::vector<Diagnosis*> diagnoses_of(Variant& variant) {
  return collect_diagnoses<Diagnosis>(variant);
}

bool has_diagnosis(const Variant& variant) { return !diagnoses_of(variant).empty(); }

bool has_diagnosis(const Report& report) {
  return std::any_of(report.variants.begin(), report.variants.end(),
                     [](const Variant& v) { return has_diagnosis(v); });
}

bool speaks_before(const Kernel& a, const Kernel& b) {
  if (a.source.has_value() != b.source.has_value()) return a.source.has_value();
  return duration_of(a) > duration_of(b);
}

std::vector<std::vector<const Kernel*>> diagnosed_functions(const Variant& variant) {
  std::vector<std::vector<const Kernel*>> groups;
  for (const auto& k : variant.kernels) {
    if (!k.diagnosis) continue;
    auto same = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      return function_key(*g.front()) == function_key(k);
    });
    if (same == groups.end()) {
      groups.push_back({&k});
    } else {
      same->push_back(&k);
      if (speaks_before(k, *same->front())) std::swap(same->front(), same->back());
    }
  }
  return groups;
}

Principal variant_principal(const Variant& variant) {
  Principal best;
  if (variant.timeline && variant.timeline->diagnosis &&
      !variant.timeline->diagnosis->findings.empty())
    consider(best, variant.timeline->diagnosis->findings.front(), "timeline", 1.0);
  for (const auto& launches : diagnosed_functions(variant)) {
    const Kernel& k = *launches.front();
    if (!k.diagnosis->findings.empty())
      consider(best, k.diagnosis->findings.front(), k.name,
               variant.totals ? 1.0 : function_share(variant, k).value_or(1.0));
  }
  return best;
}

Principal program_principal(const Report& report) {
  Principal best;
  for (const auto& v : report.variants) {
    const Principal p = variant_principal(v);
    if (p.finding.empty()) continue;
    const double share = v.totals ? v.totals->share_of_gpu_time : 1.0;
    if (best.finding.empty() || p.weight * share > best.weight)
      best = {p.finding, v.name, share, p.weight * share};
  }
  return best;
}

std::string principal_finding(const Variant& variant) { return variant_principal(variant).finding; }

std::vector<RangePrincipal> range_principals(const Report& report) {
  std::vector<RangePrincipal> out;
  if (!report.program) return out;
  for (const auto& range : report.program->ranges) {
    const auto parts = nvtx_path_parts(range.path);
    if (parts.size() != 1) continue;  // top-level ranges only
    // Per function: its profiled time inside the range, and its diagnosed launch there that
    // speaks for it.
    struct Speaker {
      const Variant* variant;
      const Kernel* launch;
      double seconds;
    };
    std::vector<Speaker> speakers;
    double total = 0;
    for (const auto& v : report.variants) {
      Speaker s{&v, nullptr, 0};
      for (const auto& k : v.kernels) {
        const auto path = nvtx_path_parts(k.nvtx_path);
        if (path.empty() || path.front() != parts.front()) continue;
        s.seconds += duration_of(k);
        if (k.diagnosis && (!s.launch || speaks_before(k, *s.launch))) s.launch = &k;
      }
      total += s.seconds;
      if (s.launch && !s.launch->diagnosis->findings.empty()) speakers.push_back(s);
    }
    Principal best;
    for (const auto& s : speakers)
      consider(best, s.launch->diagnosis->findings.front(), s.variant->name,
               total > 0 ? s.seconds / total : 1.0);
    if (!best.finding.empty()) out.push_back({range.path, best});
  }
  return out;
}

Undiagnosed undiagnosed_kernels(const Variant& variant) {
  Undiagnosed out;
  std::vector<std::string> keys;
  for (const auto& k : variant.kernels) {
    if (!undiagnosed(k)) continue;
    ++out.launches;
    if (std::find(keys.begin(), keys.end(), function_key(k)) != keys.end()) continue;
    keys.push_back(function_key(k));
    out.names.push_back(k.name);
    out.share += function_share(variant, k).value_or(0);
  }
  out.functions = static_cast<int>(keys.size());
  return out;
}

Undiagnosed undiagnosed_functions(const Report& program) {
  Undiagnosed out;
  for (const auto& v : program.variants) {
    const auto n = std::count_if(v.kernels.begin(), v.kernels.end(), undiagnosed);
    if (n == 0 || has_diagnosis(v)) continue;
    ++out.functions;
    out.launches += static_cast<int>(n);
    out.names.push_back(v.name);
    out.share += v.totals ? v.totals->share_of_gpu_time : 0;
  }
  return out;
}

bool carries_finding(const Variant& variant, const std::string& finding_id) {
  for (const Diagnosis* d : diagnoses_of(variant))
    for (const auto& f : d->findings)
      if (f.id == finding_id) return true;
  return false;
}

}  // namespace gpulab::report
