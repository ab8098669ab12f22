// The cuBLAS functions the labs call, defined here as trampolines into libcublas, which is loaded
// at the first call (reports/base/lazy_library.hpp): gpulab starts, and every lab but matmul's
// cuBLAS reference runs, where cuBLAS is not installed. cublas_v2.h declares them (its cublasCreate
// is cublasCreate_v2, and so on: the list names the library's symbols); a trampoline whose types
// differ from cuBLAS's does not compile. libcublas loads its libcublasLt itself.
//
// A lab that calls another cuBLAS function adds it to the list: gpulab does not link libcublas,
// so a function missing here is an undefined symbol at link time.
#include "labs/harness/cublas_library.hpp"

#include <cublas_v2.h>

#include "reports/base/lazy_library.hpp"

// X(L, function, number of parameters)
#define GPULAB_CUBLAS_FUNCTIONS(X, L) \
  X(L, cublasCreate_v2, 1)            \
  X(L, cublasDestroy_v2, 1)           \
  X(L, cublasGetStatusString, 1)      \
  X(L, cublasSetMathMode, 2)          \
  X(L, cublasSetStream_v2, 2)         \
  X(L, cublasSgemm_v2, 14)

namespace {

// GPULAB_CUBLAS_SONAME, _DIRS and _PACKAGE come from the build (CMakeLists.txt).
constexpr gpulab::LazyLibrarySpec kCublas{
    "cuBLAS",
    GPULAB_CUBLAS_SONAME,
    GPULAB_CUBLAS_DIRS,
    "GPULAB_CUBLAS_LIBRARY",
    "",
    "by the matmul lab (its cublas reference variant)",
    "install the CUDA toolkit's cuBLAS (package " GPULAB_CUBLAS_PACKAGE ")"};

}  // namespace

GPULAB_LAZY_LIBRARY(cublas_library, GPULAB_CUBLAS_FUNCTIONS, kCublas)

namespace gpulab::labs {

void require_cublas() { cublas_library().require(); }

}  // namespace gpulab::labs
