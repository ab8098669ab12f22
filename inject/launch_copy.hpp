// A kernel launch copied at its driver entry point so that it can be issued again: the function,
// the shape, the stream, the launch attributes and the bytes of its arguments. Kernel arguments
// are passed by value, so their bytes are all a second launch needs; what they point to is device
// memory, which the caller restores (inject/checkpoint.hpp) before issuing the copy. Batch replay
// (inject/batch_replay.cpp) issues each copied launch of a batch once per counter pass.
#pragma once

#include <cuda.h>
#include <cupti.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpulab::inject {

class LaunchCopy {
 public:
  // The launch a driver launch callback (`id`, its parameters) describes; nullopt with `why_not`
  // set when it cannot be copied (the function does not say how large its parameters are).
  static std::optional<LaunchCopy> of_driver_launch(CUpti_CallbackId id, const void* params,
                                                    std::string& why_not);

  // Launches the same kernel again, on the same stream, with the same argument bytes.
  CUresult issue() const;

  CUstream stream() const { return config_.hStream; }

 private:
  CUfunction function_ = nullptr;
  CUlaunchConfig config_{};  // attrs is set from attributes_ at issue()
  std::vector<CUlaunchAttribute> attributes_;
  std::vector<unsigned char> arguments_;  // the parameters' bytes, or the packed buffer
  std::vector<std::size_t> offsets_;      // where each parameter starts in arguments_
  bool packed_ = false;  // the arguments came as one buffer (CU_LAUNCH_PARAM_BUFFER_POINTER)
};

}  // namespace gpulab::inject
