// Shared libraries that only some commands need, loaded at their first use instead of linked.
//
// CUPTI (4 MB, plus the 32 MB libnvperf_host it loads) and cuBLAS (54 MB, plus 540 MB of
// libcublasLt) come with the CUDA toolkit. Linked, they are mapped at every start, and gpulab
// would start only where the toolkit is installed: `list`, `compare` and `diagnose --report`
// need neither. So the code that calls them (cupti/, the matmul lab) defines the C functions it
// calls itself, as trampolines with the signatures of the library's own header, and the library
// is opened with dlopen when the first of them is called.
//
// One list per library names its functions and their arity (an X-macro):
//
//   #define MY_FUNCTIONS(X, L) X(L, cuptiGetVersion, 1) X(L, cuptiGetResultString, 2)
//   GPULAB_LAZY_LIBRARY(my_library, MY_FUNCTIONS, spec)
//
// defines `gpulab::LazyLibrary& my_library()` (for this file) and, for each name, an extern "C"
// function of that name whose parameter and return types are taken from the header's declaration
// (decltype), so a wrong arity or a name the header does not declare does not compile. Each
// trampoline forwards to the real function. The first call of any of them loads the library, once
// and thread-safely, and resolves every function of the list at once: a library that lacks one is
// refused as a whole, so no call fails halfway through a sequence (or in a destructor) for want of
// a symbol. A library that cannot be loaded makes that first call throw LibraryMissing (exit code
// 7) with the library's name, where it was looked for and the remedy; later calls throw the same.
// (The trampolines are C++ functions with C names: the headers do not declare them noexcept, and
// their callers are gpulab's C++.)
//
// Where the library is looked for, in this order:
//   1. the file named by the environment variable of its spec (e.g. GPULAB_CUPTI_LIBRARY), when
//      set: that alone (a path, or a file name the loader searches for);
//   2. its soname through the loader's search path (LD_LIBRARY_PATH, ld.so.cache, /usr/lib...);
//   3. the folders of the spec, in turn: the build's gives the one the toolkit had it in where
//      gpulab was built, and /usr/local/cuda/lib64, the toolkit's usual home.
// Found in a folder of its own (1 with a path, or 3), the libraries it opens itself by name
// (its companions: CUPTI's libnvperf_host.so) are loaded from that folder first: they would not
// be found there by name, and CUPTI's host API fails (CUPTI_ERROR_NOT_INITIALIZED) without.
// The library is opened RTLD_NOW | RTLD_LOCAL and never closed: its own threads (CUPTI's) may
// still run at exit. The trampolines are not exported by gpulab (an executable exports nothing
// unless asked to), so the library's calls to its own functions never land in them.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "reports/base/errors.hpp"

namespace gpulab {

// What to load, and what to tell the user when it cannot be.
struct LazyLibrarySpec {
  const char* name;          // for messages: "CUPTI"
  const char* soname;        // "libcupti.so.13"
  const char* dirs;          // folders to try after the loader's path, ':'-separated; "" none
  const char* override_env;  // the environment variable naming a file to load instead
  const char* companions;    // ':'-separated libraries it opens by name, loaded from its folder
                             // first where it is found in a folder of its own (not by the loader)
  const char* needed_for;    // "to read counters and trace kernels (run, diagnose, selftest)"
  const char* remedy;        // "install the CUDA toolkit's CUPTI (package cuda-cupti-13-0)"
};

class LazyLibrary {
 public:
  // `functions` (`count` names) are resolved when the library is loaded; nothing happens now.
  LazyLibrary(const LazyLibrarySpec& spec, const char* const* functions, std::size_t count);
  LazyLibrary(const LazyLibrary&) = delete;
  LazyLibrary& operator=(const LazyLibrary&) = delete;

  // Loads the library (first call only) and returns function `index` of the list; throws
  // LibraryMissing when the library cannot be loaded or lacks a function of the list.
  void* function(std::size_t index);

  // Loads the library (first call only); throws LibraryMissing as function() does.
  void require();

  // Whether the library is loaded or can be (loads it on first call); never throws.
  bool available() noexcept;

  // The file the library was loaded from (loads it on first call); empty when it cannot be.
  std::string path();

  const LazyLibrarySpec& spec() const { return spec_; }

 private:
  void load();

  LazyLibrarySpec spec_;
  std::vector<const char*> names_;
  std::once_flag once_;
  void* handle_ = nullptr;
  std::vector<void*> functions_;
  std::string path_;
  std::string error_;  // why it cannot be loaded, once that is known
};

namespace lazy {

// The parts of a function pointer type: the trampolines' types come from the header's
// declaration.
template <typename F>
struct signature;
template <typename R, typename... A>
struct signature<R (*)(A...)> {
  using result = R;
  template <std::size_t I>
  using arg = std::tuple_element_t<I, std::tuple<A...>>;
  static constexpr std::size_t arity = sizeof...(A);
};

template <typename F>
using result_t = typename signature<F>::result;
template <typename F, std::size_t I>
using arg_t = typename signature<F>::template arg<I>;

}  // namespace lazy
}  // namespace gpulab

// Parameter and argument lists of 0 to 14 parameters (cublasSgemm has 14), typed from F.
#define GPULAB_LAZY_P0(F)
#define GPULAB_LAZY_P1(F) ::gpulab::lazy::arg_t<F, 0> a0
#define GPULAB_LAZY_P2(F) GPULAB_LAZY_P1(F), ::gpulab::lazy::arg_t<F, 1> a1
#define GPULAB_LAZY_P3(F) GPULAB_LAZY_P2(F), ::gpulab::lazy::arg_t<F, 2> a2
#define GPULAB_LAZY_P4(F) GPULAB_LAZY_P3(F), ::gpulab::lazy::arg_t<F, 3> a3
#define GPULAB_LAZY_P5(F) GPULAB_LAZY_P4(F), ::gpulab::lazy::arg_t<F, 4> a4
#define GPULAB_LAZY_P6(F) GPULAB_LAZY_P5(F), ::gpulab::lazy::arg_t<F, 5> a5
#define GPULAB_LAZY_P7(F) GPULAB_LAZY_P6(F), ::gpulab::lazy::arg_t<F, 6> a6
#define GPULAB_LAZY_P8(F) GPULAB_LAZY_P7(F), ::gpulab::lazy::arg_t<F, 7> a7
#define GPULAB_LAZY_P9(F) GPULAB_LAZY_P8(F), ::gpulab::lazy::arg_t<F, 8> a8
#define GPULAB_LAZY_P10(F) GPULAB_LAZY_P9(F), ::gpulab::lazy::arg_t<F, 9> a9
#define GPULAB_LAZY_P11(F) GPULAB_LAZY_P10(F), ::gpulab::lazy::arg_t<F, 10> a10
#define GPULAB_LAZY_P12(F) GPULAB_LAZY_P11(F), ::gpulab::lazy::arg_t<F, 11> a11
#define GPULAB_LAZY_P13(F) GPULAB_LAZY_P12(F), ::gpulab::lazy::arg_t<F, 12> a12
#define GPULAB_LAZY_P14(F) GPULAB_LAZY_P13(F), ::gpulab::lazy::arg_t<F, 13> a13
#define GPULAB_LAZY_A0
#define GPULAB_LAZY_A1 a0
#define GPULAB_LAZY_A2 GPULAB_LAZY_A1, a1
#define GPULAB_LAZY_A3 GPULAB_LAZY_A2, a2
#define GPULAB_LAZY_A4 GPULAB_LAZY_A3, a3
#define GPULAB_LAZY_A5 GPULAB_LAZY_A4, a4
#define GPULAB_LAZY_A6 GPULAB_LAZY_A5, a5
#define GPULAB_LAZY_A7 GPULAB_LAZY_A6, a6
#define GPULAB_LAZY_A8 GPULAB_LAZY_A7, a7
#define GPULAB_LAZY_A9 GPULAB_LAZY_A8, a8
#define GPULAB_LAZY_A10 GPULAB_LAZY_A9, a9
#define GPULAB_LAZY_A11 GPULAB_LAZY_A10, a10
#define GPULAB_LAZY_A12 GPULAB_LAZY_A11, a11
#define GPULAB_LAZY_A13 GPULAB_LAZY_A12, a12
#define GPULAB_LAZY_A14 GPULAB_LAZY_A13, a13

// The pieces GPULAB_LAZY_LIBRARY makes of each entry X(L, name, arity) of a list (L: the
// library's accessor).
#define GPULAB_LAZY_INDEX(L, name, n) name,
#define GPULAB_LAZY_NAME(L, name, n) #name,
#define GPULAB_LAZY_ARITY_CHECK(L, name, n)                               \
  static_assert(::gpulab::lazy::signature<decltype(&::name)>::arity == n, \
                #name " is listed with the wrong number of parameters");
#define GPULAB_LAZY_TRAMPOLINE(L, name, n)                                \
  extern "C" ::gpulab::lazy::result_t<decltype(&::name)> name(            \
      GPULAB_LAZY_P##n(decltype(&::name))) {                              \
    using Function = decltype(&::name);                                   \
    void* real = L().function(static_cast<std::size_t>(L##_index::name)); \
    return reinterpret_cast<Function>(real)(GPULAB_LAZY_A##n);            \
  }

// Defines `::gpulab::LazyLibrary& accessor()` (internal linkage) for `spec`, a LazyLibrarySpec,
// and one trampoline per entry X(L, name, arity) of `list(X, L)`. Use it once per library, at
// global scope, in the file that includes the library's headers.
#define GPULAB_LAZY_LIBRARY(accessor, list, spec)                                                 \
  namespace {                                                                                     \
  enum class accessor##_index : std::size_t{list(GPULAB_LAZY_INDEX, accessor)};                   \
  constexpr const char* accessor##_names[] = {list(GPULAB_LAZY_NAME, accessor)};                  \
  list(GPULAB_LAZY_ARITY_CHECK, accessor) /* Never destroyed: CUPTI's threads may still call into \
                                             the library during exit. */                          \
      ::gpulab::LazyLibrary& accessor() {                                                         \
    static auto* library = new ::gpulab::LazyLibrary(                                             \
        spec, accessor##_names, sizeof(accessor##_names) / sizeof(accessor##_names[0]));          \
    return *library;                                                                              \
  }                                                                                               \
  }                                                                                               \
  list(GPULAB_LAZY_TRAMPOLINE, accessor)
