#include "reports/diagnosis/estimates.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "reports/diagnosis/diagnosis_walk.hpp"
#include "reports/diagnosis/rules/rule.hpp"

namespace gpulab::report {
namespace {

// The principal finding of a variant: that of its longest kernel with a diagnosis.
const Finding* principal(const Variant& v) {
  const Kernel* longest = nullptr;
  double longest_s = -1;
  for (const auto& k : v.kernels) {
    if (!k.diagnosis || k.diagnosis->findings.empty()) continue;
    auto it = k.metrics.find("gpu__time_duration.sum");
    const double s = it == k.metrics.end() ? 0 : it->second;
    if (s > longest_s) longest = &k, longest_s = s;
  }
  return longest ? &longest->diagnosis->findings.front() : nullptr;
}

// Whether some finding of a variant's kernels has an id that `wanted` accepts.
template <typename Predicate>
bool has_finding(const Variant& v, Predicate wanted) {
  for (const auto& k : v.kernels)
    if (k.diagnosis)
      for (const auto& f : k.diagnosis->findings)
        if (wanted(f.id)) return true;
  return false;
}

// The rule whose finding is `finding_id` (reports/diagnosis/rules/): it declares the model.
const walk::Rule* rule_of(const std::string& finding_id) {
  for (const walk::Rule* rule : walk::kernel_walk().rules)
    if (finding_id == rule->finding.id) return rule;
  return nullptr;
}

std::string model_of(const std::string& finding_id) {
  const walk::Rule* rule = rule_of(finding_id);
  return rule && rule->estimate_model ? rule->estimate_model : "";
}

std::optional<Estimate> roof_model(const Report& r, const Variant& v) {
  const double bytes = r.work_of(v).bytes(), roof = r.device.roofs.copy_bandwidth;
  const double time = v.timing.median;
  if (bytes <= 0 || roof <= 0 || time <= 0) return std::nullopt;
  Estimate e;
  e.model = "roof";
  e.inputs = {{"work_bytes", bytes}, {"copy_roof_bytes_per_s", roof}, {"time_s", time}};
  e.saved = std::clamp(1.0 - bytes / roof / time, 0.0, 1.0);
  return e;
}

std::optional<Estimate> tail_model(const Report& r, const Variant& v) {
  if (v.kernels.size() != 1) return std::nullopt;
  const auto& a = v.kernels.front().attributes;
  const double per_wave = static_cast<double>(a.max_active_blocks_per_sm) * r.device.sm_count;
  if (a.grid_blocks == 0 || per_wave <= 0) return std::nullopt;
  const double waves = static_cast<double>(a.grid_blocks) / per_wave;
  const double whole = std::ceil(waves);
  Estimate e;
  e.model = "tail";
  e.inputs = {{"waves", waves}, {"blocks_per_wave", per_wave}};
  e.saved = (whole - waves) / whole;
  return e;
}

}  // namespace

std::optional<Estimate> model_estimate(const Report& r, const Variant& v,
                                       const std::string& finding_id) {
  const std::string model = model_of(finding_id);
  if (model == "roof") return roof_model(r, v);
  if (model == "tail") return tail_model(r, v);
  return std::nullopt;
}

bool calibrated(const std::string& finding_id) {
  const walk::Rule* rule = rule_of(finding_id);
  return rule && rule->estimate_model && rule->estimate_calibrated;
}

std::optional<Estimate> estimate(const Report& r, const Variant& v, const std::string& finding_id) {
  if (!calibrated(finding_id)) return std::nullopt;
  return model_estimate(r, v, finding_id);
}

std::optional<double> CalibrationRow::error() const {
  if (!predicted || *predicted <= 0 || measured <= 0) return std::nullopt;
  return std::abs(std::log(*predicted / measured));
}

std::vector<CalibrationRow> calibrate(const Report& r) {
  std::vector<CalibrationRow> rows;
  for (const auto& base : r.variants) {
    if (base.role != Role::baseline || base.status != VariantStatus::ok) continue;
    const Finding* f = principal(base);
    if (!f) continue;
    for (const auto& fix : r.variants) {
      if (fix.role != Role::optimized || fix.status != VariantStatus::ok) continue;
      const auto same = [&](const std::string& id) { return id == f->id; };
      if (has_finding(fix, same) || fix.timing.median <= 0) continue;
      if (r.work_of(fix).bytes() != r.work_of(base).bytes()) continue;  // another computation
      const std::string model = model_of(f->id);
      const auto same_model = [&](const std::string& id) { return model_of(id) == model; };
      if (!model.empty() && has_finding(fix, same_model))
        continue;  // the fix traded the finding for another the model puts time on
      CalibrationRow row{r.lab.name,   base.name,         fix.name, f->id,
                         std::nullopt, fix.timing.median, "",       calibrated(f->id)};
      if (auto e = model_estimate(r, base, f->id)) {
        row.predicted = base.timing.median * (1.0 - e->saved);
        row.model = e->model;
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::string calibration_table(const std::vector<CalibrationRow>& rows) {
  std::string out =
      "| lab | baseline → fix | finding | model | predicted | measured | error |\n"
      "|---|---|---|---|---|---|---|\n";
  // The summaries are of each finding's model; "shown" marks those whose estimates findings give.
  std::map<std::string, std::vector<double>> by_finding;
  std::vector<double> all, given;
  for (const auto& row : rows) {
    const auto e = row.error();
    out += fmt::format(
        "| {} | {} → {} | {} | {} | {} | {:.1f} µs | {} |\n", row.lab, row.baseline, row.fix,
        row.finding, row.model.empty() ? "-" : row.model,
        row.predicted ? fmt::format("{:.1f} µs", *row.predicted * 1e6) : std::string("no estimate"),
        row.measured * 1e6, e ? fmt::format("{:.3f}", *e) : std::string("-"));
    if (e) {
      all.push_back(*e);
      if (row.calibrated) given.push_back(*e);
      by_finding[row.finding].push_back(*e);
    }
  }
  const auto summary = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const double median =
        v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    return fmt::format("median {:.3f}, worst {:.3f} (×{:.2f}), {} pairs", median, v.back(),
                       std::exp(v.back()), v.size());
  };
  out += "\n";
  if (!given.empty()) out += "estimates findings give: " + summary(given) + "\n";
  if (!all.empty()) out += "every model: " + summary(all) + "\n";
  std::set<std::string> shown;
  for (const auto& row : rows)
    if (row.calibrated) shown.insert(row.finding);
  for (const auto& [finding, errors] : by_finding)
    out += finding + ": " + summary(errors) +
           (shown.count(finding) ? " (shown)" : " (not shown: no estimate)") + "\n";
  return out;
}

}  // namespace gpulab::report
