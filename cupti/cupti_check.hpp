// Checks for CUPTI calls, in the family of GPULAB_API_CHECK (reports/base/errors.hpp). Included
// only by cupti/*.cpp: the rest of gpulab never sees a CUPTI header.
#pragma once

#include <cupti_result.h>

#include "reports/base/errors.hpp"

namespace gpulab::cupti {

inline const char* describe(CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) return "unknown";
  return text;
}

}  // namespace gpulab::cupti

#define GPULAB_CUPTI_CHECK(call) \
  GPULAB_API_CHECK("CUPTI", call, CUPTI_SUCCESS, ::gpulab::cupti::describe)

#define GPULAB_CUPTI_CHECK_NOEXCEPT(call) \
  GPULAB_API_CHECK_NOEXCEPT("CUPTI", call, CUPTI_SUCCESS, ::gpulab::cupti::describe)
