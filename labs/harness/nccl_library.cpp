// The NCCL functions the nccl lab calls, defined here as trampolines into libnccl, which is loaded
// at the first call (reports/base/lazy_library.hpp): gpulab starts, and every other lab runs, where
// NCCL is not installed. nccl.h declares them; a trampoline whose types differ does not compile.
// Built only where the build found nccl.h (GPULAB_HAVE_NCCL, CMakeLists.txt).
#include "labs/harness/nccl_library.hpp"

#if GPULAB_HAVE_NCCL
#include <nccl.h>

#include "reports/base/lazy_library.hpp"

// X(L, function, number of parameters)
#define GPULAB_NCCL_FUNCTIONS(X, L) \
  X(L, ncclGetVersion, 1)           \
  X(L, ncclGetErrorString, 1)       \
  X(L, ncclCommInitAll, 3)          \
  X(L, ncclCommDestroy, 1)          \
  X(L, ncclGroupStart, 0)           \
  X(L, ncclGroupEnd, 0)             \
  X(L, ncclAllReduce, 7)            \
  X(L, ncclReduceScatter, 7)        \
  X(L, ncclAllGather, 6)

namespace {

// GPULAB_NCCL_SONAME, _DIRS and _PACKAGE come from the build (CMakeLists.txt).
constexpr gpulab::LazyLibrarySpec kNccl{"NCCL",
                                        GPULAB_NCCL_SONAME,
                                        GPULAB_NCCL_DIRS,
                                        "GPULAB_NCCL_LIBRARY",
                                        "",
                                        "by the nccl lab",
                                        "install NCCL (package " GPULAB_NCCL_PACKAGE ")"};

}  // namespace

GPULAB_LAZY_LIBRARY(nccl_library, GPULAB_NCCL_FUNCTIONS, kNccl)

namespace gpulab::labs {

bool nccl_available(std::string& why_not) {
  if (nccl_library().available()) return true;
  try {
    nccl_library().require();
  } catch (const std::exception& e) {
    why_not = e.what();
  }
  return false;
}

}  // namespace gpulab::labs

#else

namespace gpulab::labs {

bool nccl_available(std::string& why_not) {
  why_not = "gpulab was built without NCCL (no nccl.h where it was built)";
  return false;
}

}  // namespace gpulab::labs

#endif
