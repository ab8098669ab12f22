// What the rest of gpulab asks of the diagnoses a report holds (reports/diagnosis/diagnosis.hpp
// makes them): a variant's principal finding, a program's, and which kernels were left undiagnosed.
// Reads of the model only, so that writing or rendering a report needs no decision tree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/diagnosis_model.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::report {

// What identifies a kernel's function across its launches: its mangled name, else its
// signature, else its label.
const std::string& function_key(const Kernel& k);

// Every diagnosis of a variant: its timeline's first, then its kernels'.
std::vector<const Diagnosis*> diagnoses_of(const Variant& variant);
std::vector<Diagnosis*> diagnoses_of(Variant& variant);

// True when the variant's timeline or any of its kernels has a diagnosis.
bool has_diagnosis(const Variant& variant);
bool has_diagnosis(const Report& report);

// The share of GPU time the diagnosis weighs a kernel by: that of all launches of its function
// in the variant's kernel time (a lab), or its function's share of the program's kernel time (a
// profiled program, whose variants are its functions). Empty when durations are unknown.
std::optional<double> function_share(const Variant& variant, const Kernel& kernel);

// Whether launch `a` rather than `b` of one function speaks for it: one with per-instruction
// data (its diagnosis names lines) before one without, then the longer (by profiled duration).
bool speaks_before(const Kernel& a, const Kernel& b);

// The diagnosed launches of a variant grouped by function, in the order of their first launch,
// each group's launch that speaks for it (speaks_before) first.
std::vector<std::vector<const Kernel*>> diagnosed_functions(const Variant& variant);

// Where the principal finding of a variant, or of a program, comes from.
struct Principal {
  std::string finding;  // its id; empty when nothing was found
  std::string where;    // the kernel's name, "timeline", or (a program) the function's variant
  double share = 1;     // the GPU-time share it was weighed by
  double weight = 0;    // score x share: the ranking key
};

// A variant's principal finding: of the timeline's principal finding (share 1) and each kernel
// function's (that of its longest diagnosed launch, weighed by function_share), the one of
// highest score x share.
Principal variant_principal(const Variant& variant);
// A program's: of its functions' principal findings, the one of highest score x share of the
// program's kernel time.
Principal program_principal(const Report& report);
std::string principal_finding(const Variant& variant);  // variant_principal(variant).finding

// A profiled program's principal finding inside one of its top-level NVTX ranges: of the
// functions with diagnosed launches inside it, the one of highest score x the function's share
// of the range's profiled GPU time, its longest diagnosed launch inside speaking for it.
struct RangePrincipal {
  std::string range;  // the top-level range's path (reports/nvtx_filter.hpp)
  Principal principal;
};
// In the order of program.ranges; a range without a diagnosed launch inside has none.
std::vector<RangePrincipal> range_principals(const Report& report);

// The kernels of a variant (or the functions of a program) that have counters but were not
// diagnosed: too small a share of the GPU time (diagnose_report).
struct Undiagnosed {
  int functions = 0;
  int launches = 0;
  double share = 0;                // of the variant's (program's) GPU time, together
  std::vector<std::string> names;  // the kernels' names (one per function), in launch order
};
Undiagnosed undiagnosed_kernels(const Variant& variant);
Undiagnosed undiagnosed_functions(const Report& program);

// True when the variant's timeline or any of its kernels carries `finding_id`.
bool carries_finding(const Variant& variant, const std::string& finding_id);

}  // namespace gpulab::report
