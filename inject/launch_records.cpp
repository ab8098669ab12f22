// A launch's record: its shape and attributes, written when it returns; the end of a profiled
// launch under kernel replay; the watchdog's record.
#include "inject/injection.hpp"

#include <cstdio>
#include <cstdlib>

#include "cupti/launch_params.hpp"
#include "reports/kernel_name.hpp"

namespace gpulab::inject {

void Injection::read_attributes(CUfunction function, RecordedLaunch& r) const {
  if (!function) return;
  int registers = 0, local = 0, shared = 0, blocks = 0, max_threads = 0;
  CUdevice device = 0;
  const int block_threads = static_cast<int>(r.block[0] * r.block[1] * r.block[2]);
  // Since CUDA 12 the runtime and libraries loaded through cuLibraryLoad launch CUkernel handles
  // cast to CUfunction; the attribute calls want the context's CUfunction of that kernel.
  if (CUfunction resolved = nullptr;
      cuFuncGetAttribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, function) != CUDA_SUCCESS &&
      cuKernelGetFunction(&resolved, reinterpret_cast<CUkernel>(function)) == CUDA_SUCCESS &&
      resolved)
    function = resolved;
  if (cuFuncGetAttribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, function) != CUDA_SUCCESS ||
      cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, function) != CUDA_SUCCESS ||
      cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function) != CUDA_SUCCESS)
    return;
  report::StaticAttributes a;
  a.registers_per_thread = registers;
  a.local_bytes_per_thread = static_cast<std::uint64_t>(local);
  a.static_shared_bytes = static_cast<std::uint64_t>(shared);
  if (block_threads > 0 &&
      cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, function, block_threads,
                                                  r.dynamic_shared_bytes) == CUDA_SUCCESS &&
      cuCtxGetDevice(&device) == CUDA_SUCCESS &&
      cuDeviceGetAttribute(&max_threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                           device) == CUDA_SUCCESS &&
      max_threads > 0) {
    a.max_active_blocks_per_sm = blocks;
    // Warps, not threads: a 48-thread block takes two warp slots.
    const int warps_per_block = (block_threads + 31) / 32;
    a.theoretical_occupancy = static_cast<double>(blocks * warps_per_block) / (max_threads / 32);
  }
  r.attributes = a;
}

void Injection::launch_exit(const CUpti_CallbackData& info) {
  InFlight& f = t_launch;
  RecordedLaunch& r = f.record;
  if (!f.profiling) {
    if (f.in_full) file_.write(report::to_line(r));
    write_tally_when_due();
    return;
  }
  // A CUresult or a cudaError_t, by domain: both are 0 for success.
  const int returned =
      info.functionReturnValue ? *static_cast<const int*>(info.functionReturnValue) : 0;
  if (batching()) {
    batch_launch_exit(returned);
    return;
  }
  watchdog_.disarm();
  // Every pass has run once the kernel is done (kernel replay serializes it).
  const CUresult finished = returned == 0 ? cuCtxSynchronize() : CUDA_SUCCESS;
  if (returned != 0 || finished != CUDA_SUCCESS) {
    r.error =
        "the launch failed (CUDA error " + std::to_string(returned ? returned : finished) + ")";
    file_.write(report::to_line(r));
    close_session();  // what the launches before it recorded, if CUPTI can still read it
  } else {
    session_->launches.push_back(r.index);
    file_.write(report::to_line(r));  // its counters follow when the session closes
    if (session_->launches.size() >= kSessionLaunches) close_session();
  }
  f.profiling = false;
  f.serialized = {};
}

void Injection::on_watchdog(std::int64_t index, const std::string& name, double seconds) {
  file_.write(report::to_line(report::RecordedWatchdog{::getpid(), index, name, seconds}));
  std::fprintf(stderr,
               "gpulab: launch %lld of %s ran for more than %g s under replay; the program is "
               "stopped (a kernel that waits for another cannot be replayed: try --replay none)\n",
               static_cast<long long>(index), report::display_name(report::demangle(name)).c_str(),
               seconds);
  std::_Exit(kWatchdogExitCode);
}

}  // namespace gpulab::inject
