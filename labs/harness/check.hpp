// Correctness: compare a result with the CPU reference, element by element.
#pragma once

#include <cstddef>
#include <cstdint>

#include "reports/measures.hpp"

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

// Integer results (hashes, generators) must match bit for bit: the tolerance is zero and the
// error of an element is |got - ref| as a number. The message names the first mismatch by
// index, in hexadecimal.
report::Check compare_exact(const std::uint32_t* got, const std::uint32_t* ref, std::size_t n);

}  // namespace gpulab::labs
