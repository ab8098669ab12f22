// A variant's kernels in JSON (docs/report-schema.md, "kernel" and "launches"): a lab's as one
// object per kernel; a profiled program's function as columns over its launches, where a field
// all launches share is written once and the launches whose diagnosis reached the same answers
// share one stored diagnosis. A function of 10,000 profiled launches then takes megabytes, not
// the hundreds that one object per launch repeating every metric's name and every finding's
// text took.
#pragma once

#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/json_reader.hpp"
#include "reports/report.hpp"

namespace gpulab::report {

nlohmann::json kernel_json(const Kernel& k);
Kernel read_kernel(const Reader& r);

// The launches' columns: {"count": N, a kernel object whose every field is one value for all N
// launches or an array of N (null: absent for that launch), "diagnoses": the distinct stored
// diagnoses, "diagnosis_of": for each launch its diagnosis's index (null: not diagnosed),
// "sources" when a launch has one}.
nlohmann::json launch_columns_json(const std::vector<Kernel>& kernels);
std::vector<Kernel> read_launch_columns(const Reader& r);

// About what a launch takes in memory once read (its strings, counters and diagnosis): a launch
// that shares a stored diagnosis gets a copy of it, so a few bytes of columns can stand for
// kilobytes each. Reading refuses a report whose launches would take more than
// kMaxLaunchBytes together, and writing refuses one as well (app/outputs.hpp), so that what
// gpulab writes it reads back. A diagnosed launch takes about 10 KB: some 200,000 of them.
std::size_t launch_bytes(const Kernel& k);
inline constexpr std::size_t kMaxLaunchBytes = std::size_t{2} << 30;
std::size_t launch_bytes(const Report& report);  // every kernel's, together

// Whether two diagnoses reached the same answer at every node of their path, with the same
// findings in the same order and the same verdict: what launches must have in common to share
// one stored diagnosis (their evidence values, scores and details may differ).
bool same_outcome(const Diagnosis& a, const Diagnosis& b);

}  // namespace gpulab::report
