// The device memory of a context, saved and put back: CUPTI's checkpoint API, which saves every
// device and pinned allocation of the context (in spare device memory, else in host memory) and
// restores them. Batch replay saves the state before a batch of launches and the state after it:
// each pass starts from the first, and the program goes on from the second, so that neither the
// replays nor a restore can change what the program sees (inject/batch_replay.cpp).
#pragma once

#include <cuda.h>
#include <cupti_checkpoint.h>

#include <string>

namespace gpulab::inject {

class Checkpoint {
 public:
  Checkpoint() = default;
  ~Checkpoint() { free(); }
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;

  // Saves `context`'s memory now (after the work already queued in it). Both throw Error with
  // what CUPTI said.
  void save(CUcontext context);
  void restore();
  void free() noexcept;  // gives the memory back; save() may follow
  // Drops the handle without asking CUPTI (in a forked child, where the parent's CUDA is gone).
  void forget() noexcept { saved_ = false; }

 private:
  NV::Cupti::Checkpoint::CUpti_Checkpoint handle_{};
  bool saved_ = false;
};

}  // namespace gpulab::inject
