// A lab declared as data: its spec, a table of variants, and how to set it up.
//
// Each table entry carries its VariantSpec as `spec` beside what the lab's runs need to launch
// it (a kernel, a launch shape, a schedule, ...), so that a variant is named once, next to its
// kernel, and `list`, the command line and the runs all read that one table. The lab's runs
// look their variant up in the table they were set up with.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "labs/harness/lab.hpp"

namespace gpulab::labs {

template <typename Entry>
class VariantTable {
 public:
  VariantTable(std::string lab, std::vector<Entry> entries)
      : lab_(std::move(lab)), entries_(std::move(entries)) {}

  // The entry named `variant`; throws UsageError naming the lab when there is none.
  const Entry& operator[](const std::string& variant) const {
    for (const auto& entry : entries_)
      if (entry.spec.name == variant) return entry;
    throw_unknown_variant(lab_.c_str(), variant);
  }

  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::string lab_;
  std::vector<Entry> entries_;
};

template <typename Entry>
class TableLab final : public Lab {
 public:
  using Setup = std::function<std::unique_ptr<LabRun>(
      const VariantTable<Entry>& variants, const ParamValues& params, std::uint64_t seed)>;

  // `spec` names no variants: they are the table's, in its order (baseline first).
  TableLab(LabSpec spec, std::vector<Entry> variants, Setup setup)
      : spec_(std::move(spec)),
        variants_(spec_.name, std::move(variants)),
        setup_(std::move(setup)) {
    for (const auto& entry : variants_.entries()) spec_.variants.push_back(entry.spec);
  }

  const LabSpec& spec() const override { return spec_; }

  std::unique_ptr<LabRun> setup(const ParamValues& params, std::uint64_t seed) const override {
    return setup_(variants_, params, seed);
  }

 private:
  LabSpec spec_;
  VariantTable<Entry> variants_;
  Setup setup_;
};

template <typename Entry, typename Setup>
std::unique_ptr<Lab> make_table_lab(LabSpec spec, std::vector<Entry> variants, Setup setup) {
  return std::make_unique<TableLab<Entry>>(std::move(spec), std::move(variants), std::move(setup));
}

}  // namespace gpulab::labs
