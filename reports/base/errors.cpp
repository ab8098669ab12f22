#include "reports/base/errors.hpp"

#include <cstdio>

#include <fmt/format.h>

namespace gpulab {

std::string format_api_failure(const char* api, int status, const char* description,
                               const char* call, const char* file, int line) {
  return fmt::format("{} error {} ({}) in `{}` at {}:{}", api, status,
                     description ? description : "no description", call, file, line);
}

void report_api_failure_noexcept(const std::string& message) noexcept {
  std::fprintf(stderr, "gpulab: warning: %s\n", message.c_str());
}

}  // namespace gpulab
