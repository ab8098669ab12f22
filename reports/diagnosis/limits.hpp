// How close a lab comes to its limit: the best variant, and its share of what the lab is measured
// against. A lab with a reference implementation (cuBLAS, CUB) is measured against it, time for
// time; any other against the measured copy roof (its effective bandwidth's share of it), which is
// the limit of the streaming labs and only a scale for the others (docs/limits.md says which).
#pragma once

#include <string>

#include "reports/report_fwd.hpp"

namespace gpulab::report {

struct LabLimit {
  const Variant* best = nullptr;       // the fastest checked variant that is not a reference
  const Variant* reference = nullptr;  // the fastest checked reference; nullptr: the copy roof
  double fraction = 0;  // of the limit: reference time / best time, or roof_fraction; 0: unknown
  std::string limit() const;  // "cub", "copy roof"
  std::string text() const;   // "82.6% of copy roof", "101.4% of cub"; "-" when unknown
};

// best is nullptr when no variant passed its check.
LabLimit lab_limit(const Report& report);

}  // namespace gpulab::report
