// Support for the GPU tests. One Session for the whole GPU test binary, as the shell would keep
// one: the device, its roofs and the profiler are set up once and reused by every test. Tests
// skip, with the reason, when no GPU is usable. What a lab test reads of a run: gpu/lab_run.hpp.
#pragma once

#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "app/session.hpp"
#include "reports/base/errors.hpp"

namespace gpulab::test {

inline app::Session& gpu_session() {
  static app::Session session;
  return session;
}

// Empty when a GPU is usable, else why not.
inline const std::optional<std::string>& gpu_unavailable() {
  static const std::optional<std::string> reason = []() -> std::optional<std::string> {
    try {
      gpu_session().device();
      return std::nullopt;
    } catch (const Error& e) {
      return std::string(e.what());
    }
  }();
  return reason;
}

#define GPULAB_REQUIRE_GPU()                                                \
  do {                                                                      \
    if (const auto& why = ::gpulab::test::gpu_unavailable())                \
      GTEST_SKIP() << "needs a GPU: " << *why;                              \
  } while (0)

}  // namespace gpulab::test
