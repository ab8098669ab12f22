// libcupti is loaded when gpulab first calls CUPTI, not at start (see
// reports/base/lazy_library.hpp): the commands that need no counters or traces run where CUPTI is
// not installed.
#pragma once

#include <string>

namespace gpulab::cupti {

// Loads libcupti now, if it is not loaded yet; throws LibraryMissing (exit code 7), naming the
// library, where it was looked for and what to do, when it cannot be loaded.
void require_library();

// Whether libcupti is loaded or can be (loads it); never throws.
bool library_available() noexcept;

// The file libcupti was loaded from; empty when it cannot be loaded.
std::string library_path();

}  // namespace gpulab::cupti
