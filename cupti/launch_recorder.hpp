// Which kernels a piece of host code launched, as the driver saw them: the mangled function
// name and launch shape of every kernel launch, a library's included (cuBLAS, CUB), recorded
// through the CUPTI Callback API.
//
// A process can have one CUPTI subscriber: under ncu, nsys or compute-sanitizer the recorder
// cannot be created (the constructor throws), and callers go on without it. Callbacks are
// enabled only while `record` runs, so launches elsewhere (timing) pay nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gpulab::cupti {

class CubinStore;

struct LaunchRecord {
  std::string mangled_name;
  std::uint32_t grid[3] = {0, 0, 0};
  std::uint32_t block[3] = {0, 0, 0};
  std::uint32_t dynamic_shared_bytes = 0;
};

class LaunchRecorder {
 public:
  LaunchRecorder();  // subscribes; throws Error when another subscriber holds CUPTI
  ~LaunchRecorder();
  LaunchRecorder(const LaunchRecorder&) = delete;
  LaunchRecorder& operator=(const LaunchRecorder&) = delete;

  // Runs `work` and returns the kernels it launched, in launch order. Kernels launched by a
  // CUDA graph are not launches of their own and do not appear.
  std::vector<LaunchRecord> record(const std::function<void()>& work);

  // From now on, copies the cubin of every module loaded into `store` (which must outlive the
  // recorder): per-instruction data names its code by cubin. Modules loaded earlier are not
  // seen; CUDA loads a module when one of its functions is first used.
  void capture_cubins(CubinStore& store);

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace gpulab::cupti
