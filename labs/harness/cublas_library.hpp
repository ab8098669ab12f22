// libcublas is loaded when a lab first calls cuBLAS, not at start
// (labs/harness/cublas_library.cpp).
#pragma once

namespace gpulab::labs {

// Loads libcublas now, if it is not loaded yet; throws LibraryMissing (exit code 7), naming the
// library, where it was looked for and what to do, when it cannot be loaded.
void require_cublas();

}  // namespace gpulab::labs
