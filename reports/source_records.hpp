// A profiled launch's per-instruction data (`gpulab profile --source`) as the injection library
// records it beside its launch records (reports/profile_records.hpp): one `source` record with
// what was collected of the launch's function (its name, where its lines came from, how its
// stall samples were taken, what could not be collected, how many instructions follow), then one
// `instruction` record per SASS instruction, in offset order, each with its line and counters.
// A record line nests one level at most (reports/record_line.hpp): a function's thousands of
// instructions are thousands of lines, which the reader joins back into the launch's `source`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "reports/record_line.hpp"
#include "reports/source_model.hpp"

namespace gpulab::report {

// The `source` of launches, by (pid, launch index), as read so far.
struct RecordedSources {
  std::map<std::pair<std::int64_t, std::int64_t>, KernelSource> by_launch;
  // Instructions each source's record announced and that have not been read yet.
  std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> instructions_left;
};

// The lines of one launch's source: its `source` record, then its instructions'.
std::string to_lines(std::int64_t pid, std::int64_t launch_index, const KernelSource& source);

// Whether a record type is one of these; `read_source_record` reads one such line. Throws
// NotARecord for an instruction of no announced source, or past the count its record announced.
bool is_source_record(const std::string& type);
void read_source_record(const std::string& type, const RecordLine::Object& r, std::int64_t pid,
                        RecordedSources& into);

}  // namespace gpulab::report
