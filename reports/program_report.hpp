// How the records of a profiled program become a report (`gpulab profile`): the launches of each
// kernel function grouped into one variant, heaviest first, with every launch's duration in its
// timing, the share of the program's kernel time in its totals, and each launch whose counters
// were collected as one of its kernels. What was not measured is said in the program's
// `left_out`. Plain data in and out; app/ runs the program and reads the records.
#pragma once

#include <string>

#include "reports/profile_records.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::report {

// `program` carries what the parent knows (argv, how the program ended, wall time, the options
// that chose the launches); this fills in the rest. `metric_set` names what was asked for
// ("basic", "full", "custom", "none").
Report program_report(ProgramInfo program, const RecordSet& records, const std::string& metric_set);

}  // namespace gpulab::report
