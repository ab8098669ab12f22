// A kernel of known work for the profiler's own GPU tests: every launch of `launch_increment`
// over n ints executes ceil(n/256) blocks of 256 threads, each thread one load, add and store.
#pragma once

namespace gpulab::test {

// Adds 1 to each of d[0..n) on the current context's default stream; returns the CUDA error.
int launch_increment(int* d, int n);

}  // namespace gpulab::test
