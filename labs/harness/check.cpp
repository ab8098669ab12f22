#include "labs/harness/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "labs/harness/parallel_for.hpp"

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

// What one chunk of a comparison found; chunks combine in the order of their elements, so the
// result is the same however the elements were split.
struct Tally {
  std::uint64_t mismatches = 0;
  std::size_t first_bad = SIZE_MAX;
  double max_abs_error = 0;
  double max_ref = 0;

  void add(const Tally& later) {
    mismatches += later.mismatches;
    if (first_bad == SIZE_MAX) first_bad = later.first_bad;
    max_abs_error = std::max(max_abs_error, later.max_abs_error);
    max_ref = std::max(max_ref, later.max_ref);
  }
};

// Compares [0, n) on every core: tally(begin, end) compares a chunk.
template <typename TallyChunk>
Tally tally_all(std::size_t n, const TallyChunk& tally) {
  Tally all;
  for (const Tally& chunk : parallel_chunks<Tally>(n, tally)) all.add(chunk);
  return all;
}

void record(report::Check& check, const Tally& all) {
  check.mismatches = all.mismatches;
  check.max_abs_error = all.max_abs_error;
}

}  // namespace

report::Check compare(const float* got, const float* ref, std::size_t n, Tolerance tol) {
  report::Check check;
  check.tolerance_abs = tol.abs;
  check.tolerance_rel = tol.rel;
  check.elements = n;

  const Tally all = tally_all(n, [&](std::size_t begin, std::size_t end) {
    Tally t;
    for (std::size_t i = begin; i < end; ++i) {
      const double g = got[i], r = ref[i];
      t.max_ref = std::max(t.max_ref, std::fabs(r));
      const double err = std::fabs(g - r);
      const bool ok = err <= tol.abs + tol.rel * std::fabs(r);  // false for NaN
      if (!ok) {
        ++t.mismatches;
        if (t.first_bad == SIZE_MAX) t.first_bad = i;
      }
      t.max_abs_error = std::isnan(err) ? INFINITY : std::max(t.max_abs_error, err);
    }
    return t;
  });
  record(check, all);
  conclude(check, all.max_ref, [&] {
    return fmt::format("{}: got {}, expected {}", all.first_bad, got[all.first_bad],
                       ref[all.first_bad]);
  });
  return check;
}

report::Check compare_exact(const std::uint32_t* got, const std::uint32_t* ref, std::size_t n) {
  report::Check check;
  check.elements = n;

  const Tally all = tally_all(n, [&](std::size_t begin, std::size_t end) {
    Tally t;
    for (std::size_t i = begin; i < end; ++i) {
      t.max_ref = std::max(t.max_ref, static_cast<double>(ref[i]));
      if (got[i] == ref[i]) continue;
      ++t.mismatches;
      if (t.first_bad == SIZE_MAX) t.first_bad = i;
      const double err = std::fabs(static_cast<double>(got[i]) - static_cast<double>(ref[i]));
      t.max_abs_error = std::max(t.max_abs_error, err);
    }
    return t;
  });
  record(check, all);
  conclude(check, all.max_ref, [&] {
    return fmt::format("{}: got {:#010x}, expected {:#010x}", all.first_bad, got[all.first_bad],
                       ref[all.first_bad]);
  });
  return check;
}

}  // namespace gpulab::labs
