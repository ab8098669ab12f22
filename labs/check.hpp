// Correctness: compare a result with the CPU reference, element by element.
#pragma once

#include <cstddef>

#include "reports/report.hpp"

namespace gpulab::labs {

// An element passes when |got - ref| <= abs + rel * |ref|. Exact computations (copies,
// permutations) use {0, 0}; floating-point sums scale `rel` with the number of terms.
struct Tolerance {
  double abs = 0;
  double rel = 0;
};

// NaN in `got` (an unwritten, poisoned element) always fails. The message names the first
// mismatch by index.
report::Check compare(const float* got, const float* ref, std::size_t n, Tolerance tol);

}  // namespace gpulab::labs
