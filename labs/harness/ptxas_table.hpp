// What ptxas reported for each lab kernel when the build compiled it (`-Xptxas -v`, sm_90).
//
// The runtime's attributes give a kernel's local memory as one figure (localSizeBytes), which
// does not say whether the values there are arrays the code indexes at run time or registers
// spilled under pressure; ptxas says. The build keeps ptxas's report per lab object
// (cmake/ptxas_log.sh), tabulates it (cmake/ptxas_table.cmake) and compiles the table into the
// gpulab_ptxas_table library, which defines these functions. gpulab_labs links it for its
// users: the table depends on every lab object, so it cannot be one of them.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpulab::labs {

// Per thread. Spill bytes are what the kernel's store and load instructions for spilled values
// move, counted once each in the code, not at run time; a callee that was not inlined has its
// own frame and spills, not counted here.
struct PtxasRecord {
  int registers = 0;
  int stack_frame_bytes = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
};

// Every kernel the build compiled for sm_90, sorted by mangled name.
const std::vector<std::pair<std::string, PtxasRecord>>& ptxas_records();

// The record of the kernel with this mangled name; nullopt for kernels the build did not
// compile (kernels of precompiled libraries such as cuBLAS).
std::optional<PtxasRecord> ptxas_record(const std::string& mangled_name);

}  // namespace gpulab::labs
