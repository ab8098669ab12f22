// A kernel's code as the report holds it: its SASS instructions, each with the source line the
// line table gives it (code compiled with -lineinfo) and the per-instruction counters and stall
// samples collected for it. Part of the report model (reports/report.hpp); reports/source/ builds
// it from line tables and shows it by line.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpulab::report {

// Where an instruction comes from, as the line table says. For an inlined function's code, its
// own line and the call site it was inlined at.
struct SourceLine {
  std::string file;  // as the line table names it
  int line = 0;
  std::string inlined_file;  // empty when not inlined
  int inlined_line = 0;

  bool operator==(const SourceLine& o) const {
    return file == o.file && line == o.line && inlined_file == o.inlined_file &&
           inlined_line == o.inlined_line;
  }
};

// The names of per-instruction counters (SassInstruction::counters), as ncu's source page counts
// them: warp instructions, thread instructions, the global sectors and requests and the shared
// wavefronts and requests of memory instructions, and warp stall samples, all and per reason
// ("samples.long_scoreboard").
namespace source_counter {
inline constexpr const char* inst_executed = "inst_executed";
inline constexpr const char* thread_inst_executed = "thread_inst_executed";
inline constexpr const char* global_sectors = "global_sectors";
inline constexpr const char* global_requests = "global_requests";
inline constexpr const char* shared_wavefronts = "shared_wavefronts";
inline constexpr const char* shared_requests = "shared_requests";
inline constexpr const char* local_loads = "local_loads";    // warp instructions: spills, stack
inline constexpr const char* local_stores = "local_stores";  // and arrays kept in local memory
// Branch executions whose active threads took two or more targets: where a warp splits.
inline constexpr const char* divergent_branches = "divergent_branches";
inline constexpr const char* samples = "samples";
inline constexpr const char* stall_prefix = "samples.";
}  // namespace source_counter

struct SassInstruction {
  std::uint64_t offset = 0;         // bytes from the function's first instruction
  std::string sass;                 // the instruction as nvdisasm prints it, without the final ';'
  std::optional<SourceLine> where;  // none without line information
  std::map<std::string, double> counters;  // per-instruction counters and stall samples
};

// How a kernel's warp-stall samples were taken (CUPTI's PC sampling, one kernel at a time): every
// `period_cycles` cycles, each SM sub-partition samples the program counter of one of its warps
// and why it is not issuing.
struct StallSampling {
  std::uint64_t period_cycles = 0;
  std::uint64_t samples = 0;  // taken in this kernel's launches, every reason
  std::uint64_t dropped = 0;  // lost because the hardware buffer was full
};

// One kernel function's code: the report's `source` section of a kernel.
struct KernelSource {
  std::string function;  // the mangled name, as the cubin's symbol table has it
  // Where the instructions and lines came from: "nvdisasm" (its listing of the cubin), "cupti"
  // (the cubin captured at module load), or "hand-made" (a test's, said so where it is used).
  std::string origin;
  std::vector<SassInstruction> instructions;
  // The sources' texts by file, only when the user asked for them (--embed-source): sources may
  // be private, and a report travels.
  std::map<std::string, std::string> files;
  std::optional<StallSampling> sampling;  // when stall samples were taken
  // What could not be collected, one line each ("per-instruction counters: not collected: ...").
  std::vector<std::string> notes;
  // Whether any instruction has a line: code built without -lineinfo (most library kernels) has
  // none, and is shown by instruction offset.
  bool has_lines() const {
    for (const auto& i : instructions)
      if (i.where) return true;
    return false;
  }
};

}  // namespace gpulab::report
