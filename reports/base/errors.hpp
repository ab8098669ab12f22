// The error types every layer throws, and the exit codes only main() turns them into.
//
// Helpers never exit: they throw one of these, with a one-line message that names the problem.
// API failures (CUDA runtime, driver, CUPTI) carry the failing call, file:line and the API's own
// error string; the check macros that build them live beside each API's wrapper
// (labs/harness/cuda_check.hpp, cupti/cupti_check.hpp) and share GPULAB_API_CHECK below.
#pragma once

#include <stdexcept>
#include <string>

namespace gpulab {

// Every exit code, its name and what it means: the one table the enum below, the man page and
// `gpulab --help` (app/manual.cpp) are made from, and README.md ("Exit codes") is checked
// against (tests/unit/manual_test.cpp).
//   X(name, code, meaning)
#define GPULAB_EXIT_CODES(X)                                                                    \
  X(ok, 0, "success")                                                                           \
  X(internal, 1, "internal error: a CUDA or CUPTI call failed unexpectedly, or a bug")          \
  X(usage, 2,                                                                                   \
    "usage or invalid input: unknown command, lab, variant or parameter, a value that is not "  \
    "a number or out of range, an option that does not apply, a malformed report, an "          \
    "unwritable output path or a save that failed")                                             \
  X(no_gpu, 3,                                                                                  \
    "no usable GPU: no driver, no device, or a device this build has no code for (in the "      \
    "shell also: a CUDA context an earlier error left unusable)")                               \
  X(check_failed, 4, "a variant's result disagreed with the CPU reference")                     \
  X(regression, 5,                                                                              \
    "compare --fail-on-regression found a variant slower by more than PCT percent, outside "    \
    "noise")                                                                                    \
  X(selftest_failed, 6, "selftest found a principal finding other than the expected one")       \
  X(missing_library, 7,                                                                         \
    "a library the command needs cannot be loaded: CUPTI (libcupti) for counters and "          \
    "timelines, cuBLAS (libcublas) for the matmul lab; the message says what to install")       \
  X(program_not_executable, 126,                                                                \
    "profile: the program was found but cannot be executed (permission, a folder), as shells "  \
    "give it")                                                                                  \
  X(program_not_found, 127, "profile: the program is not found (on PATH), as shells give it")   \
  X(interrupted, 130,                                                                           \
    "interrupted by Ctrl-C: the status shells give a process SIGINT stopped (128 + 2); in the " \
    "interactive shell, the status of the command Ctrl-C stopped")

enum class ExitCode : int {
#define GPULAB_EXIT_CODE_ENUMERATOR(name, code, meaning) name = code,
  GPULAB_EXIT_CODES(GPULAB_EXIT_CODE_ENUMERATOR)
#undef GPULAB_EXIT_CODE_ENUMERATOR
};

struct ExitCodeInfo {
  ExitCode code;
  const char* name;
  const char* meaning;
};

// The table above, in order of code.
inline constexpr ExitCodeInfo kExitCodes[] = {
#define GPULAB_EXIT_CODE_INFO(name, code, meaning) {ExitCode::name, #name, meaning},
    GPULAB_EXIT_CODES(GPULAB_EXIT_CODE_INFO)
#undef GPULAB_EXIT_CODE_INFO
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

// A shared library the command needs (CUPTI, cuBLAS) is not installed, not on the loader's
// path, or too old; the message names it and says how to make it found
// (reports/base/lazy_library.hpp).
class LibraryMissing : public Error {
 public:
  explicit LibraryMissing(const std::string& message) : Error(ExitCode::missing_library, message) {}
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
#define GPULAB_API_CHECK(api, call, success, describe)                                        \
  do {                                                                                        \
    const auto gpulab_status_ = (call);                                                       \
    if (gpulab_status_ != (success)) {                                                        \
      throw ::gpulab::ApiError(                                                               \
          api, static_cast<int>(gpulab_status_),                                              \
          ::gpulab::format_api_failure(api, static_cast<int>(gpulab_status_),                 \
                                       describe(gpulab_status_), #call, __FILE__, __LINE__)); \
    }                                                                                         \
  } while (0)

#define GPULAB_API_CHECK_NOEXCEPT(api, call, success, describe)                               \
  do {                                                                                        \
    const auto gpulab_status_ = (call);                                                       \
    if (gpulab_status_ != (success)) {                                                        \
      ::gpulab::report_api_failure_noexcept(                                                  \
          ::gpulab::format_api_failure(api, static_cast<int>(gpulab_status_),                 \
                                       describe(gpulab_status_), #call, __FILE__, __LINE__)); \
    }                                                                                         \
  } while (0)

namespace gpulab {
// Used by the _NOEXCEPT checks: prints "gpulab: warning: ..." on stderr, never throws.
void report_api_failure_noexcept(const std::string& message) noexcept;
}  // namespace gpulab
