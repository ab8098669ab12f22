// The catalogues of the diagnosis, gathered from the declarations of the walks and their rules
// (reports/diagnosis/rules/): every threshold, every finding, the unit of every evidence quantity;
// and the thresholds a walk reads (docs/diagnosis.md).
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "reports/base/errors.hpp"
#include "reports/base/user_input.hpp"
#include "reports/derived.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/diagnosis/diagnosis_walk.hpp"

namespace gpulab::report {
namespace {

// The kernel walk's, then the timeline's: each root's declarations, then its rules' in the order
// the walk first visits them (a rule both walks visit, once).
template <typename Visit>
void for_each_declaration(Visit&& visit) {
  std::vector<const walk::Rule*> seen;
  for (const walk::Walk* w : {&walk::kernel_walk(), &walk::timeline_walk()}) {
    visit(w->thresholds, w->quantities, nullptr);
    for (const walk::Rule* rule : w->rules) {
      if (std::find(seen.begin(), seen.end(), rule) != seen.end()) continue;
      seen.push_back(rule);
      visit(rule->thresholds, rule->quantities, rule);
    }
  }
}

}  // namespace

const std::vector<ThresholdTraits>& threshold_catalogue() {
  static const std::vector<ThresholdTraits> all = [] {
    std::vector<ThresholdTraits> out;
    for_each_declaration([&](const auto& thresholds, const auto&, const walk::Rule*) {
      out.insert(out.end(), thresholds.begin(), thresholds.end());
    });
    return out;
  }();
  return all;
}

// A finding two rules give (launch overhead: a short kernel, or idle gaps between short ones) is
// listed once.
const std::vector<FindingTraits>& finding_catalogue() {
  static const std::vector<FindingTraits> all = [] {
    std::vector<FindingTraits> out;
    for_each_declaration([&](const auto&, const auto&, const walk::Rule* rule) {
      if (rule && std::none_of(out.begin(), out.end(), [&](const FindingTraits& f) {
            return std::string(f.id) == rule->finding.id;
          }))
        out.push_back(rule->finding);
    });
    return out;
  }();
  return all;
}

const FindingTraits* find_finding(const std::string& id) {
  const auto& all = finding_catalogue();
  auto it =
      std::find_if(all.begin(), all.end(), [&](const FindingTraits& f) { return id == f.id; });
  return it == all.end() ? nullptr : &*it;
}

const std::vector<RuleInfo>& all_rules() {
  static const std::vector<RuleInfo> all = [] {
    std::vector<RuleInfo> out = kernel_rules();
    for (const walk::Rule* rule : walk::timeline_walk().rules)
      out.push_back(walk::describe(*rule, "timeline"));
    return out;
  }();
  return all;
}

const RuleInfo* rule_of_threshold(const std::string& threshold) {
  for (const auto& rule : all_rules())
    if (std::find(rule.thresholds.begin(), rule.thresholds.end(), threshold) !=
        rule.thresholds.end())
      return &rule;
  return nullptr;
}

metrics::Unit evidence_unit(const std::string& metric) {
  static const std::map<std::string, metrics::Unit> declared = [] {
    std::map<std::string, metrics::Unit> out;
    for_each_declaration(
        [&](const auto&, const std::vector<walk::Quantity>& quantities, const walk::Rule*) {
          for (const auto& q : quantities) out.emplace(q.name, q.unit);
        });
    return out;
  }();
  auto it = declared.find(metric);
  return it != declared.end() ? it->second : unit_of(metric);
}

Thresholds::Thresholds() {
  for (const auto& t : threshold_catalogue()) values_[t.name] = t.default_value;
}

double Thresholds::operator[](const std::string& name) const { return values_.at(name); }

std::map<std::string, double> Thresholds::overridden() const {
  std::map<std::string, double> out;
  for (const auto& t : threshold_catalogue())
    if (values_.at(t.name) != t.default_value) out[t.name] = values_.at(t.name);
  return out;
}

void Thresholds::set(const std::string& name, double value) {
  auto it = values_.find(name);
  if (it == values_.end()) {
    throw UsageError(
        fmt::format("unknown threshold '{}' (gpulab diagnose --list-thresholds lists them)", name));
  }
  const auto& all = threshold_catalogue();
  const auto& traits = *std::find_if(all.begin(), all.end(),
                                     [&](const ThresholdTraits& t) { return name == t.name; });
  // A NaN compares false with everything: an unchecked one would turn every test it takes part
  // in into "no" and pass every gate.
  if (!std::isfinite(value) || value < traits.min || value > traits.max)
    throw UsageError(fmt::format("--threshold {}: {} is out of range (allowed: {} to {})", name,
                                 value, traits.min, traits.max));
  it->second = value;
}

void Thresholds::set_from_text(const std::string& assignment) {
  const auto [name, text] = split_assignment("--threshold", assignment);
  set(name, parse_number("--threshold " + name, text));
}

}  // namespace gpulab::report
