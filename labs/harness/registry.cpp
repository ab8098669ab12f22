#include "labs/harness/registry.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "reports/base/errors.hpp"
#include "reports/base/user_input.hpp"

namespace gpulab::labs {
namespace {

// Function-local so it exists before the first registration, whatever the order in which
// translation units are initialized.
std::map<std::string, std::unique_ptr<Lab>>& registry() {
  static std::map<std::string, std::unique_ptr<Lab>> labs;
  return labs;
}

}  // namespace

bool register_lab(std::unique_ptr<Lab> lab) {
  const std::string name = lab->spec().name;
  if (!registry().emplace(name, std::move(lab)).second)
    throw std::logic_error(fmt::format("two labs are registered as '{}'", name));
  return true;
}

std::vector<const Lab*> all_labs() {
  std::vector<const Lab*> out;
  for (const auto& [name, lab] : registry()) out.push_back(lab.get());
  return out;
}

const Lab* find_lab(const std::string& name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : it->second.get();
}

const Lab& lab_or_throw(const std::string& name) {
  if (const Lab* lab = find_lab(name)) return *lab;
  std::string known;
  std::vector<std::string> names;
  for (const auto& [n, lab] : registry()) {
    known += (known.empty() ? "" : ", ") + n;
    names.push_back(n);
  }
  const std::string hint = did_you_mean(name, names);
  throw UsageError(
      fmt::format("unknown lab '{}' ({}labs: {})", name, hint.empty() ? "" : hint + " ", known));
}

}  // namespace gpulab::labs
