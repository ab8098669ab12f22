#include "inject/checkpoint.hpp"

#include <dlfcn.h>

#include <cupti.h>

#include "cupti/cupti_check.hpp"

namespace gpulab::inject {
namespace {

// The API's types and the size macro, which names the struct unqualified.
using namespace NV::Cupti::Checkpoint;  // NOLINT(google-build-using-namespace)

// The checkpoint API lives in a library of its own beside libcupti (libcheckpoint.so), loaded at
// the first save: a toolkit without it costs batch replay alone, not the whole injection.
struct CheckpointApi {
  decltype(&cuptiCheckpointSave) save = nullptr;
  decltype(&cuptiCheckpointRestore) restore = nullptr;
  decltype(&cuptiCheckpointFree) free = nullptr;
  std::string missing;  // why the library could not be used
};

void* open_beside_cupti() {
  if (void* h = dlopen("libcheckpoint.so", RTLD_NOW | RTLD_LOCAL)) return h;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiGetVersion), &info) == 0 || !info.dli_fname)
    return nullptr;
  std::string path = info.dli_fname;
  path = path.substr(0, path.rfind('/') + 1) + "libcheckpoint.so";
  return dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
}

const CheckpointApi& api() {
  static const CheckpointApi loaded = [] {
    CheckpointApi a;
    void* h = open_beside_cupti();
    if (!h) {
      a.missing = "CUPTI's checkpoint library (libcheckpoint.so) was not found beside libcupti";
      return a;
    }
    a.save = reinterpret_cast<decltype(a.save)>(dlsym(h, "cuptiCheckpointSave"));
    a.restore = reinterpret_cast<decltype(a.restore)>(dlsym(h, "cuptiCheckpointRestore"));
    a.free = reinterpret_cast<decltype(a.free)>(dlsym(h, "cuptiCheckpointFree"));
    if (!a.save || !a.restore || !a.free)
      a.missing = "libcheckpoint.so lacks the checkpoint functions";
    return a;
  }();
  return loaded;
}

}  // namespace

void Checkpoint::save(CUcontext context) {
  free();
  if (!api().missing.empty()) throw Error(ExitCode::internal, api().missing);
  handle_ = CUpti_Checkpoint{};
  handle_.structSize = CUpti_Checkpoint_STRUCT_SIZE;
  handle_.ctx = context;
  // Leave the program room to allocate: the copy spills into host memory before it takes the
  // last gigabyte of the device.
  handle_.reserveDeviceMB = 1024;
  if (const CUptiResult r = api().save(&handle_); r != CUPTI_SUCCESS) {
    handle_ = CUpti_Checkpoint{};
    throw Error(ExitCode::internal,
                std::string("CUPTI could not save the device memory: ") + cupti::describe(r));
  }
  saved_ = true;
}

void Checkpoint::restore() {
  if (!saved_) throw Error(ExitCode::internal, "no device memory was saved");
  if (const CUptiResult r = api().restore(&handle_); r != CUPTI_SUCCESS)
    throw Error(ExitCode::internal,
                std::string("CUPTI could not restore the device memory: ") + cupti::describe(r));
}

void Checkpoint::free() noexcept {
  if (saved_) api().free(&handle_);
  saved_ = false;
}

}  // namespace gpulab::inject
