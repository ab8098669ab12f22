// The library's entry points: the driver's InitializeInjection (from the program's first cuInit)
// and NVTX's InitializeInjectionNvtx2 (from its first NVTX call), which start the process's one
// Injection, hook it to fork and to the process's end, and write the process's last records.
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "inject/injection.hpp"

namespace gpulab::inject {
namespace {

Injection* g_injection = nullptr;  // lives as long as the process: never destroyed

}  // namespace

void Injection::at_exit() {
  if (exit_pid_ == ::getpid()) return;  // registered once, runs once per process
  exit_pid_ = ::getpid();
  close_session_of(nullptr);
  if (subscriber_ && refused_.empty()) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  file_.write(tally_.take_lines(::getpid()) + report::end_line(::getpid()));
}

}  // namespace gpulab::inject

namespace {

// Sets gpulab up in this process, once: from the first of the program's cuInit and NVTX calls,
// which may come on two threads at once, or one inside the other (CUPTI's own set-up may
// initialize the driver): the first call does it, any other returns at once.
void start_injection() {
  using gpulab::inject::g_injection;
  static std::atomic<bool> started{false};
  if (started.exchange(true)) return;
  const char* text = std::getenv(gpulab::report::kInjectionConfigVariable);
  if (!text) return;  // loaded without gpulab profile: stay out of the way
  try {
    g_injection = new gpulab::inject::Injection(gpulab::report::injection_config_from_json(text));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpulab: the profile settings are unusable: %s\n", e.what());
    return;
  }
  pthread_atfork([] { g_injection->before_fork(); }, [] { g_injection->after_fork_in_parent(); },
                 [] { g_injection->after_fork_in_child(); });
  std::atexit([] { g_injection->at_exit(); });
  g_injection->start();
}

}  // namespace

// The driver calls this once, from the program's first cuInit; 1 means the tool is in place.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  start_injection();
  return 1;
}

// NVTX calls this from the program's first NVTX call (NVTX_INJECTION64_PATH names this library),
// which may come before any CUDA call: gpulab starts then, so that ranges pushed before the first
// kernel are known, and hands NVTX to CUPTI, which delivers each call to gpulab's subscriber.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    const void* get_export_table) {
  start_injection();
  // NVTX unloads a library whose initialization fails; gpulab's exit handler lives here.
  Dl_info self{};
  if (::dladdr(reinterpret_cast<const void*>(&start_injection), &self) && self.dli_fname)
    ::dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
  // CUPTI's own entry point of the same name, looked up in libcupti itself, not in this library.
  Dl_info cupti{};
  if (!::dladdr(reinterpret_cast<const void*>(&cuptiSubscribe_v2), &cupti) || !cupti.dli_fname)
    return 0;
  void* library = ::dlopen(cupti.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (!library) return 0;
  using Entry = int (*)(const void*);
  const auto entry = reinterpret_cast<Entry>(::dlsym(library, "InitializeInjectionNvtx2"));
  const int ready = entry ? entry(get_export_table) : 0;
  ::dlclose(library);
  return ready;
}
