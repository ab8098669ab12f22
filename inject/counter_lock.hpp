// A GPU's performance counters serve one profiling session at a time, across processes: a
// program whose processes launch kernels on the same GPU at once (fork, a launcher that starts
// workers) would have the second session refused while the first runs. The processes of one
// `gpulab profile` take turns instead, as ncu's do: each kernel-replay session holds an
// exclusive flock(2) on a file named after the GPU's UUID in the run's record directory. The
// lock goes with its process, so a process that dies (or that the watchdog ends) never leaves
// it held; and a wait for it is bounded, so that two processes that wait on each other outside
// CUDA cannot hang the program.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>

#include <cuda.h>

namespace gpulab::inject {

class CounterLock {
 public:
  explicit CounterLock(std::string dir) : dir_(std::move(dir)) {}
  CounterLock(const CounterLock&) = delete;
  CounterLock& operator=(const CounterLock&) = delete;

  // Waits until this process holds the counters of `device`, for at most `seconds`: false when
  // another process held them all that time. A lock file that cannot be used holds nothing and
  // returns true: profiling then goes on unserialized.
  bool acquire(CUdevice device, double seconds);
  void release();

 private:
  int file_for(CUdevice device);

  std::string dir_;
  std::map<CUdevice, int> fds_;  // this process's open lock files, by device
  pid_t owner_ = 0;              // the process fds_ belongs to (a forked child opens its own)
  int held_ = -1;
};

}  // namespace gpulab::inject
