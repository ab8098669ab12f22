// Reads the SASS listing `nvdisasm -gi -c CUBIN` prints (the toolkit's disassembler, with the
// line table of code built with -lineinfo): each function's instructions, their offsets, and the
// source line of each, with the call site of inlined code. The offline form of what CUPTI's
// cuptiGetSassToSourceCorrelation answers on the GPU.
#pragma once

#include <string>
#include <vector>

#include "reports/source_model.hpp"

namespace gpulab::report {

// The functions of the listing, in its order. Throws UsageError (naming the line) for a listing
// that is not nvdisasm's: an instruction outside any function, or an offset that is not
// hexadecimal.
std::vector<KernelSource> read_nvdisasm(const std::string& listing);

// Rewrites the files of every line that start with `root` + "/" as relative to it (the
// repository's own sources, named by the absolute paths the compiler was given).
void relative_to(std::vector<KernelSource>& functions, const std::string& root);

}  // namespace gpulab::report
