// The lab registry. Each lab registers itself from its own file with GPULAB_REGISTER_LAB, at
// static-initialization time and without touching the GPU; labs/ is built as an OBJECT library
// so that the linker keeps those registrations.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "labs/harness/lab.hpp"

namespace gpulab::labs {

// Labs in name order.
std::vector<const Lab*> all_labs();

// nullptr when there is no such lab.
const Lab* find_lab(const std::string& name);

// Like find_lab, but throws UsageError naming the known labs.
const Lab& lab_or_throw(const std::string& name);

// Adds `lab` and returns true; throws std::logic_error when a lab of the same name is already
// registered (from a static initializer, that stops the program before main, with the name).
bool register_lab(std::unique_ptr<Lab> lab);

}  // namespace gpulab::labs

#define GPULAB_CONCAT_INNER(a, b) a##b
#define GPULAB_CONCAT(a, b) GPULAB_CONCAT_INNER(a, b)
// Registers the lab that `make_lab()` returns (a std::unique_ptr<Lab>).
#define GPULAB_REGISTER_LAB(make_lab)                                            \
  namespace {                                                                    \
  const bool GPULAB_CONCAT(gpulab_registered_,                                   \
                           __LINE__) = ::gpulab::labs::register_lab(make_lab()); \
  }
