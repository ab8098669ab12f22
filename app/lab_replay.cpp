#include "app/lab_replay.hpp"

namespace gpulab::app {

const char* to_string(LabReplay replay) {
  return replay == LabReplay::kernel ? "kernel" : "variant";
}

const char* to_string(CacheControl control) {
  return control == CacheControl::none ? "none" : "all";
}

CacheControl default_cache_control(LabReplay replay) {
  return replay == LabReplay::kernel ? CacheControl::none : CacheControl::all;
}

}  // namespace gpulab::app
