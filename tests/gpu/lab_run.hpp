// Runs a lab on the GPU tests' shared session, and the few accessors every lab test needs. Apart
// from the session (gpu/gpu_session.hpp) because these read the report model: a test that only
// needs the GPU is not rebuilt when the model changes.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "app/lab_runner.hpp"
#include "gpu/gpu_session.hpp"
#include "labs/harness/registry.hpp"
#include "reports/report.hpp"

namespace gpulab::test {

// Runs a lab on the shared session.
inline report::Report run_lab(const std::string& lab, const app::RunSettings& settings) {
  return app::run_lab(gpu_session(), labs::lab_or_throw(lab), settings, {"gpulab_gpu_tests", lab});
}

// Settings for a correctness-only run: one launch, no warm-up, no counters.
inline app::RunSettings check_only(std::int64_t size,
                                   std::map<std::string, std::int64_t> params = {}) {
  app::RunSettings s;
  s.size = size;
  s.params = std::move(params);
  s.repeat = 1;
  s.warmup = 0;
  s.metrics = "none";
  return s;
}

// Every variant of `r` passed its check, over `elements` elements, with no error at all.
inline void expect_exact(const report::Report& r, std::uint64_t elements,
                         const std::string& context) {
  for (const auto& v : r.variants) {
    EXPECT_EQ(v.check.status, report::CheckStatus::passed)
        << context << " " << v.name << ": " << v.check.message;
    EXPECT_EQ(v.check.elements, elements) << context << " " << v.name;
    EXPECT_EQ(v.check.max_abs_error, 0.0) << context << " " << v.name;
  }
}

// A raw (`metrics`) or derived (`derived`) value of a variant's only kernel; a test failure,
// and -1, when the variant has another number of kernels or the value was not measured.
inline double kernel_value(const report::Variant& v, const char* name,
                           std::map<std::string, double> report::Kernel::*values) {
  EXPECT_EQ(v.kernels.size(), 1u) << v.name;
  if (v.kernels.empty()) return -1;
  const auto& map = v.kernels.front().*values;
  auto it = map.find(name);
  EXPECT_NE(it, map.end()) << v.name << ": " << name << " not measured";
  return it == map.end() ? -1 : it->second;
}
inline double derived(const report::Variant& v, const char* name) {
  return kernel_value(v, name, &report::Kernel::derived);
}
inline double raw(const report::Variant& v, const char* name) {
  return kernel_value(v, name, &report::Kernel::metrics);
}

}  // namespace gpulab::test
