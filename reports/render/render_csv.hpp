// CSV forms (RFC 4180 quoting), for spreadsheets and scripts: long ("tidy") rows, one value
// per row, so that any metric set gives the same columns.
#pragma once

#include <string>
#include <vector>

#include "reports/diagnosis/compare.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::report {

// One CSV record (fields quoted when they contain a comma, a quote or a line break; a field a
// spreadsheet would run as a formula, text that starts with = + - @, a tab or a carriage return,
// is written as '... in quotes, as OWASP recommends; numbers are left as they are).
std::string csv_line(const std::vector<std::string>& fields);

// lab,variant,kernel,quantity,value: timing, bandwidth, check, every raw and derived metric,
// static attributes, and the principal finding when diagnosed.
std::string report_csv(const Report& report);

// lab,variant,kernel,rank,finding,severity,score: the ranked findings of every diagnosed kernel.
std::string findings_csv(const Report& report);

// a,b,lab,variant_a,variant_b,median_a,median_b,change,noise,verdict
std::string comparison_csv(const std::vector<Comparison>& against_first);

}  // namespace gpulab::report
