// How a report is printed on stdout in a --format, and the exit status it gives
// (app/report_printing.cpp).
#pragma once

#include <string>
#include <vector>

#include "app/cli.hpp"
#include "app/output_format.hpp"
#include "reports/render/style.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::app {

void print_report(const report::Report& report, OutputFormat format, Io& io,
                  bool all_findings = false);
report::Style text_style(OutputFormat format, const Io& io, bool all_findings = false);
// check_failed when a variant's result was wrong, else 0.
int exit_code_of(const report::Report& report);

// `run --all`'s summary: the best variant of each lab against its baseline and its limit, one
// row per report.
std::string all_labs_summary(const std::vector<report::Report>& reports,
                             const report::Style& style);

}  // namespace gpulab::app
