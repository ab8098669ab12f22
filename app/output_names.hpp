// Output names that take templates, as nsys's and ncu's do, so that every rank of a job writes
// a file of its own: `--json 'step.%q{RANK}.json'`.
//   %p       the process id of gpulab
//   %h       the host name
//   %q{ENV}  the value of the environment variable ENV (unset: an error, never "")
//   %%       a '%'
// Any other '%' is an error. Every error is a UsageError naming the option and the template.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "reports/report.hpp"

namespace gpulab::app {

// What a template reads from the process it runs in; tests give their own.
struct NameSources {
  std::function<std::optional<std::string>(const std::string&)> variable;  // nullopt: unset
  long pid = 0;
  std::string host;
};

// The process's own: its environment, its id, its host name.
NameSources this_process();

// `text` with its templates filled in from `sources`; `what` names the option in errors
// ("--json").
std::string expand_output_name(const std::string& what, const std::string& text,
                               const NameSources& sources);

// Whether `text` names a file of its own for each rank of a job: it holds %p, or %q{} of a
// variable that numbers the job's ranks (RANK, SLURM_PROCID, ...), or %h with one that numbers
// a host's (LOCAL_RANK, SLURM_LOCALID, ...). Checked only as a template: "-" (standard output)
// and a plain name are the same for every rank.
bool names_one_file_per_rank(const std::string& text);

// Throws UsageError when `text` (the option `what` as typed) would name one file for every rank
// of a job of more than one rank: ranks would overwrite each other's reports. Standard output
// ("-") is each rank's own.
void refuse_one_file_for_all_ranks(const std::string& what, const std::string& text,
                                   const std::optional<report::RankInfo>& rank);

}  // namespace gpulab::app
