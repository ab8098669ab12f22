// Where each finding sits in the code: from a kernel's per-instruction counters (its `source`
// section), the lines that hold most of the finding's own evidence, as its rule measures it
// (reports/diagnosis/rules/rule.hpp, LineMeasure). The verdict and the ranking stay as they are.
#pragma once

#include "reports/diagnosis_model.hpp"
#include "reports/source_model.hpp"

namespace gpulab::report {

inline constexpr std::size_t kLinesPerFinding = 3;

// Names the top lines (at most kLinesPerFinding) of every finding of `d` whose rule measures
// lines, in `source`'s line table; leaves a finding without lines where none holds any of it.
void attach_lines(Diagnosis& d, const KernelSource& source);

}  // namespace gpulab::report
