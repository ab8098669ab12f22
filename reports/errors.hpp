// The error types every layer throws, and the exit codes only main() turns them into.
//
// Helpers never exit: they throw one of these, with a one-line message that names the problem.
// API failures (CUDA runtime, driver, CUPTI) carry the failing call, file:line and the API's own
// error string; the check macros that build them live beside each API's wrapper
// (labs/cuda_check.hpp, cupti/cupti_check.hpp) and share GPULAB_API_CHECK below.
#pragma once

#include <stdexcept>
#include <string>

namespace gpulab {

// Documented in README.md ("Exit codes"); tests assert them.
enum class ExitCode : int {
  ok = 0,
  internal = 1,         // an unexpected failure: a CUDA/CUPTI call failed mid-run, a bug
  usage = 2,            // bad command line or invalid input (unknown lab, bad size, bad file)
  no_gpu = 3,           // no usable GPU (or counters required and unavailable)
  check_failed = 4,     // a variant's result disagreed with the CPU reference
  regression = 5,       // compare --fail-on-regression found a slower kernel
  selftest_failed = 6,  // selftest: a variant's principal finding was not the expected one
  interrupted = 130,    // Ctrl-C stopped a shell command (128 + SIGINT, as shells report it)
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

// Bad command line or bad input data (a malformed report, an unwritable path, ...).
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(ExitCode::usage, message) {}
};

// Ctrl-C stopped a command at a safe point (the interactive shell; see app/interrupt.hpp).
class Interrupted : public Error {
 public:
  Interrupted() : Error(ExitCode::interrupted, "interrupted") {}
};

// No device, no driver, or a device this build cannot run on.
class NoGpuError : public Error {
 public:
  explicit NoGpuError(const std::string& message) : Error(ExitCode::no_gpu, message) {}
};

// A CUDA runtime/driver or CUPTI call returned an error.
class ApiError : public Error {
 public:
  ApiError(const std::string& api, int status, const std::string& message)
      : Error(ExitCode::internal, message), api_(api), status_(status) {}
  const std::string& api() const noexcept { return api_; }
  int status() const noexcept { return status_; }

 private:
  std::string api_;
  int status_;
};

// "<api> error <status> (<description>) in `<call>` at <file>:<line>"
std::string format_api_failure(const char* api, int status, const char* description,
                               const char* call, const char* file, int line);

}  // namespace gpulab

// The one shape of every API check: evaluate once, compare with the API's success value, and on
// failure either throw an ApiError (CHECK) or report on stderr and carry on (for destructors).
#define GPULAB_API_CHECK(api, call, success, describe)                                     \
  do {                                                                                     \
    const auto gpulab_status_ = (call);                                                    \
    if (gpulab_status_ != (success)) {                                                     \
      throw ::gpulab::ApiError(                                                            \
          api, static_cast<int>(gpulab_status_),                                           \
          ::gpulab::format_api_failure(api, static_cast<int>(gpulab_status_),              \
                                       describe(gpulab_status_), #call, __FILE__, __LINE__)); \
    }                                                                                      \
  } while (0)

#define GPULAB_API_CHECK_NOEXCEPT(api, call, success, describe)                             \
  do {                                                                                     \
    const auto gpulab_status_ = (call);                                                    \
    if (gpulab_status_ != (success)) {                                                     \
      ::gpulab::report_api_failure_noexcept(                                               \
          ::gpulab::format_api_failure(api, static_cast<int>(gpulab_status_),              \
                                       describe(gpulab_status_), #call, __FILE__, __LINE__)); \
    }                                                                                      \
  } while (0)

namespace gpulab {
// Used by the _NOEXCEPT checks: prints "gpulab: warning: ..." on stderr, never throws.
void report_api_failure_noexcept(const std::string& message) noexcept;
}  // namespace gpulab
