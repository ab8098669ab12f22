// A GPU's performance counters serve one profiling session at a time, across processes and
// across runs: a program whose processes launch kernels on the same GPU at once (fork, a
// launcher that starts workers), or two `gpulab profile` runs on one machine, would have the
// second session refused while the first runs. They take turns instead, as ncu's processes do:
// each session holds the machine-wide lock named after the GPU's UUID (inject/machine_lock.hpp),
// which goes with its process, so a process that dies (or that the watchdog ends) never leaves it
// held; and a wait for it is bounded, so that processes that wait on each other outside CUDA
// cannot hang the program.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <cuda.h>

#include "inject/machine_lock.hpp"

namespace gpulab::inject {

class CounterLock {
 public:
  CounterLock();
  ~CounterLock();
  CounterLock(const CounterLock&) = delete;
  CounterLock& operator=(const CounterLock&) = delete;

  // Waits until this process holds the counters of `device`, for at most `seconds`. A lock
  // that cannot be used (`failed`: MachineLock::why() of lock_of(device)) holds nothing.
  MachineLock::Outcome acquire(CUdevice device, double seconds, std::string& why);
  void release();

  // The name of the lock of the GPU with this UUID (hex), the same in every process.
  static std::string lock_name(const std::string& uuid);

 private:
  // In a child that fork() made: the parent's locks are the parent's (a socket the child keeps
  // open would keep the parent's lock bound after the parent let it go).
  static void forget_in_child();

  std::map<CUdevice, std::unique_ptr<MachineLock>> locks_;
  MachineLock* held_ = nullptr;
};

}  // namespace gpulab::inject
