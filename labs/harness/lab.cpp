#include "labs/harness/lab.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "reports/base/errors.hpp"
#include "reports/base/user_input.hpp"

namespace gpulab::labs {

const VariantSpec* LabSpec::find_variant(const std::string& variant) const {
  auto it = std::find_if(variants.begin(), variants.end(),
                         [&](const VariantSpec& v) { return v.name == variant; });
  return it == variants.end() ? nullptr : &*it;
}

void throw_unknown_variant(const char* lab, const std::string& name) {
  throw UsageError(fmt::format("lab '{}' has no variant '{}'", lab, name));
}

ParamValues resolve_params(const LabSpec& spec, std::optional<std::int64_t> size,
                           const std::map<std::string, std::int64_t>& overrides) {
  ParamValues values;
  bool size_used = false;
  for (const auto& p : spec.params) {
    values[p.name] = p.default_value;
    if (size && p.set_by_size) {
      values[p.name] = *size;
      size_used = true;
    }
  }
  if (size && !size_used)
    throw UsageError(fmt::format("lab '{}' has no size parameter", spec.name));
  for (const auto& [name, value] : overrides) {
    if (!values.count(name)) {
      std::string known;
      for (const auto& p : spec.params) known += (known.empty() ? "" : ", ") + p.name;
      throw UsageError(fmt::format("lab '{}' has no parameter '{}' (parameters: {})", spec.name,
                                   name, known.empty() ? "none" : known));
    }
    values[name] = value;
  }
  for (const auto& p : spec.params) {
    const auto v = values[p.name];
    if (v < p.min || v > p.max) {
      // Name what the user typed: --param NAME=VALUE, or --size and the parameter it set.
      if (size && p.set_by_size && !overrides.count(p.name))
        throw UsageError(
            fmt::format("--size {} is out of range for lab '{}' ({}: allowed {} to {})", v,
                        spec.name, p.name, p.min, p.max));
      throw UsageError(fmt::format("--param {}={} is out of range for lab '{}' (allowed: {} to {})",
                                   p.name, v, spec.name, p.min, p.max));
    }
  }
  if (spec.check_params) spec.check_params(values);
  return values;
}

std::vector<const VariantSpec*> select_variants(const LabSpec& spec, const std::string& selection) {
  std::vector<const VariantSpec*> out;
  if (selection == "all") {
    for (const auto& v : spec.variants) out.push_back(&v);
    return out;
  }
  std::set<std::string> wanted;
  for (const auto& name : split_list("--variant", selection)) {
    if (!spec.find_variant(name)) {
      std::string known;
      std::vector<std::string> names;
      for (const auto& v : spec.variants) {
        known += (known.empty() ? "" : ", ") + v.name;
        names.push_back(v.name);
      }
      const std::string hint = did_you_mean(name, names);
      throw UsageError(fmt::format("lab '{}' has no variant '{}' ({}variants: {}, or all)",
                                   spec.name, name, hint.empty() ? "" : hint + " ", known));
    }
    wanted.insert(name);
  }
  for (const auto& v : spec.variants)
    if (wanted.count(v.name)) out.push_back(&v);
  return out;
}

}  // namespace gpulab::labs
