// libnccl is loaded when the nccl lab first calls NCCL, not at start
// (labs/harness/nccl_library.cpp).
#pragma once

#include <string>

namespace gpulab::labs {

// Whether libnccl can be loaded here (loads it when it can); `why_not` says what is missing.
bool nccl_available(std::string& why_not);

}  // namespace gpulab::labs
