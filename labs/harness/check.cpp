#include "labs/harness/check.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace gpulab::labs {
namespace {

// Relative error, status and message, once every element has been compared. `first_mismatch`
// describes the first element that differs (called only when one does).
template <typename Describe>
void conclude(report::Check& check, double max_ref, Describe first_mismatch) {
  check.max_rel_error = max_ref > 0 ? check.max_abs_error / max_ref : check.max_abs_error;
  if (check.mismatches == 0) {
    check.status = report::CheckStatus::passed;
    return;
  }
  check.status = report::CheckStatus::failed;
  check.message = fmt::format("{} of {} elements differ; first at index {}", check.mismatches,
                              check.elements, first_mismatch());
}

}  // namespace

report::Check compare(const float* got, const float* ref, std::size_t n, Tolerance tol) {
  report::Check check;
  check.tolerance_abs = tol.abs;
  check.tolerance_rel = tol.rel;
  check.elements = n;

  double max_ref = 0;
  std::size_t first_bad = n;
  for (std::size_t i = 0; i < n; ++i) {
    const double g = got[i], r = ref[i];
    max_ref = std::max(max_ref, std::fabs(r));
    const double err = std::fabs(g - r);
    const bool ok = err <= tol.abs + tol.rel * std::fabs(r);  // false for NaN
    if (!ok) {
      ++check.mismatches;
      if (first_bad == n) first_bad = i;
    }
    if (std::isnan(err)) {
      check.max_abs_error = INFINITY;
    } else {
      check.max_abs_error = std::max(check.max_abs_error, err);
    }
  }
  conclude(check, max_ref, [&] {
    return fmt::format("{}: got {}, expected {}", first_bad, got[first_bad], ref[first_bad]);
  });
  return check;
}

report::Check compare_exact(const std::uint32_t* got, const std::uint32_t* ref, std::size_t n) {
  report::Check check;
  check.elements = n;

  double max_ref = 0;
  std::size_t first_bad = n;
  for (std::size_t i = 0; i < n; ++i) {
    max_ref = std::max(max_ref, static_cast<double>(ref[i]));
    if (got[i] == ref[i]) continue;
    ++check.mismatches;
    if (first_bad == n) first_bad = i;
    const double err = std::fabs(static_cast<double>(got[i]) - static_cast<double>(ref[i]));
    check.max_abs_error = std::max(check.max_abs_error, err);
  }
  conclude(check, max_ref, [&] {
    return fmt::format("{}: got {:#010x}, expected {:#010x}", first_bad, got[first_bad],
                       ref[first_bad]);
  });
  return check;
}

}  // namespace gpulab::labs
