#include "cupti/range_profiler.hpp"

#include <cmath>
#include <cstdint>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <cupti_version.h>
#include <fmt/format.h>

#include "cupti/cuda_context.hpp"
#include "cupti/cupti_check.hpp"

namespace gpulab::cupti {
namespace {

// Errors that mean "no counters on this machine" rather than "gpulab has a bug": the user
// gets the cause and what to do, and the run goes on with timing and correctness only.
const char* unavailable_remedy(CUptiResult r) {
  switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "GPU performance counters are restricted to administrators (ERR_NVGPUCTRPERM): run "
             "as root or with CAP_PERFMON/CAP_SYS_ADMIN, or load the driver with "
             "NVreg_RestrictProfilingToAdminUsers=0";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_HARDWARE_BUSY:
      return "another profiler (ncu, nsys, compute-sanitizer, DCGM profiling) holds the "
             "counters: run gpulab outside it, or pause it";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
      return "profiling is not enabled for this virtual GPU (vGPU needs enable_profiling)";
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
      return "counters are unavailable in confidential-computing mode";
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
      return "counters are unavailable on this MIG instance";
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
      return "counters are unavailable under WSL on this driver";
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
      return "this device or configuration does not support the CUPTI range profiler";
    default:
      return nullptr;
  }
}

// Like GPULAB_CUPTI_CHECK, but availability errors become CountersUnavailable.
#define GPULAB_CUPTI_COUNTERS(call)                                                            \
  do {                                                                                         \
    const CUptiResult status_ = (call);                                                        \
    if (status_ != CUPTI_SUCCESS) {                                                            \
      if (const char* remedy_ = unavailable_remedy(status_))                                   \
        throw CountersUnavailable(fmt::format("counters unavailable ({}): {}",                 \
                                              describe(status_), remedy_));                    \
      GPULAB_CUPTI_CHECK(status_);                                                             \
    }                                                                                          \
  } while (0)

std::vector<const char*> c_names(const std::vector<std::string>& names) {
  std::vector<const char*> out;
  for (const auto& n : names) out.push_back(n.c_str());
  return out;
}

void check_device_supported(int device) {
  CUpti_Profiler_DeviceSupported_Params p{CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
  p.cuDevice = device;
  p.api = CUPTI_PROFILER_RANGE_PROFILING;
  GPULAB_CUPTI_COUNTERS(cuptiProfilerDeviceSupported(&p));
  if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return;
  const char* why = "unsupported configuration";
  if (p.architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
    why = "the GPU architecture is older than Volta";
  else if (p.vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
    why = "profiling is not enabled for this virtual GPU";
  else if (p.confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
    why = "confidential-computing mode is on";
  else if (p.cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
    why = "this is a mining (CMP) device";
  else if (p.wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
    why = "WSL does not support profiling on this driver";
  else if (p.sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
    why = "SLI is enabled";
  throw CountersUnavailable(fmt::format("counters unavailable: {}", why));
}

}  // namespace

int api_version() {
  uint32_t version = 0;
  try {
    return cuptiGetVersion(&version) == CUPTI_SUCCESS ? static_cast<int>(version) : 0;
  } catch (const LibraryMissing&) {  // gpulab's trampolines: libcupti cannot be loaded
    return 0;
  }
}

// The CUPTI objects, in the order they are created; torn down in reverse by ~RangeProfiler.
struct RangeProfiler::Impl {
  CUcontext ctx = nullptr;
  bool profiler_initialized = false;
  CUpti_Profiler_Host_Object* host = nullptr;
  CUpti_RangeProfiler_Object* target = nullptr;
  std::vector<uint8_t> availability_image;
  std::vector<uint8_t> config_image;
  std::vector<uint8_t> counter_data;

  void enable() {
    if (target) return;
    CUpti_RangeProfiler_Enable_Params p{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    p.ctx = ctx;
    GPULAB_CUPTI_COUNTERS(cuptiRangeProfilerEnable(&p));
    target = p.pRangeProfilerObject;
  }
  void disable() noexcept {
    if (!target) return;
    CUpti_RangeProfiler_Disable_Params p{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = target;
    GPULAB_CUPTI_CHECK_NOEXCEPT(cuptiRangeProfilerDisable(&p));
    target = nullptr;
  }

  // Adds `names` to a fresh host object and returns CUPTI's verdict (used to find which
  // metric of a rejected list is the unknown one).
  CUptiResult try_metrics(const std::string& chip, const std::vector<std::string>& names) const {
    CUpti_Profiler_Host_Initialize_Params init{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    init.pChipName = chip.c_str();
    init.pCounterAvailabilityImage = availability_image.data();
    if (cuptiProfilerHostInitialize(&init) != CUPTI_SUCCESS) return CUPTI_ERROR_UNKNOWN;
    auto names_c = c_names(names);
    CUpti_Profiler_Host_ConfigAddMetrics_Params add{
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    add.pHostObject = init.pHostObject;
    add.ppMetricNames = names_c.data();
    add.numMetrics = names_c.size();
    const CUptiResult result = cuptiProfilerHostConfigAddMetrics(&add);
    CUpti_Profiler_Host_Deinitialize_Params deinit{
        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    deinit.pHostObject = init.pHostObject;
    cuptiProfilerHostDeinitialize(&deinit);
    return result;
  }
};

RangeProfiler::RangeProfiler(int device, std::vector<std::string> metrics)
    : impl_(std::make_unique<Impl>()), metrics_(std::move(metrics)) {
  if (metrics_.empty()) throw UsageError("no metrics to collect");
  impl_->ctx = current_context();

  CUpti_Profiler_Initialize_Params init{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  GPULAB_CUPTI_COUNTERS(cuptiProfilerInitialize(&init));
  impl_->profiler_initialized = true;
  check_device_supported(device);

  CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip.deviceIndex = static_cast<size_t>(device);
  GPULAB_CUPTI_COUNTERS(cuptiDeviceGetChipName(&chip));
  chip_ = chip.pChipName;

  // Availability must be read before Enable: the call can fail while a session is active.
  CUpti_Profiler_GetCounterAvailability_Params avail{
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  avail.ctx = impl_->ctx;
  GPULAB_CUPTI_COUNTERS(cuptiProfilerGetCounterAvailability(&avail));
  impl_->availability_image.resize(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = impl_->availability_image.data();
  GPULAB_CUPTI_COUNTERS(cuptiProfilerGetCounterAvailability(&avail));

  CUpti_Profiler_Host_Initialize_Params host{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = chip_.c_str();
  host.pCounterAvailabilityImage = impl_->availability_image.data();
  GPULAB_CUPTI_CHECK(cuptiProfilerHostInitialize(&host));
  impl_->host = host.pHostObject;

  auto names = c_names(metrics_);
  CUpti_Profiler_Host_ConfigAddMetrics_Params add{
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  add.pHostObject = impl_->host;
  add.ppMetricNames = names.data();
  add.numMetrics = names.size();
  if (const CUptiResult r = cuptiProfilerHostConfigAddMetrics(&add); r != CUPTI_SUCCESS) {
    for (const auto& m : metrics_)
      if (impl_->try_metrics(chip_, {m}) != CUPTI_SUCCESS)
        throw UsageError(fmt::format("metric '{}' is not available on {} ({})", m, chip_,
                                     describe(r)));
    GPULAB_CUPTI_CHECK(r);
  }

  CUpti_Profiler_Host_GetConfigImageSize_Params size{
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  size.pHostObject = impl_->host;
  GPULAB_CUPTI_CHECK(cuptiProfilerHostGetConfigImageSize(&size));
  impl_->config_image.resize(size.configImageSize);
  CUpti_Profiler_Host_GetConfigImage_Params image{
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  image.pHostObject = impl_->host;
  image.pConfigImage = impl_->config_image.data();
  image.configImageSize = impl_->config_image.size();
  GPULAB_CUPTI_CHECK(cuptiProfilerHostGetConfigImage(&image));

  CUpti_Profiler_Host_GetNumOfPasses_Params passes{
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  passes.pConfigImage = impl_->config_image.data();
  passes.configImageSize = impl_->config_image.size();
  GPULAB_CUPTI_CHECK(cuptiProfilerHostGetNumOfPasses(&passes));
  passes_ = static_cast<int>(passes.numOfPasses);

  // Enabling now reports missing privileges or a busy profiler before any work is done.
  impl_->enable();
}

std::vector<std::string> RangeProfiler::unsupported(const std::vector<std::string>& names) const {
  std::vector<std::string> out;
  for (const auto& name : names)
    if (impl_->try_metrics(chip_, {name}) != CUPTI_SUCCESS) out.push_back(name);
  return out;
}

RangeProfiler::~RangeProfiler() {
  abandon_kernel_replay();
  impl_->disable();
  if (impl_->host) {
    CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    p.pHostObject = impl_->host;
    GPULAB_CUPTI_CHECK_NOEXCEPT(cuptiProfilerHostDeinitialize(&p));
  }
  if (impl_->profiler_initialized) {
    CUpti_Profiler_DeInitialize_Params p{CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
    GPULAB_CUPTI_CHECK_NOEXCEPT(cuptiProfilerDeInitialize(&p));
  }
}

// ---- one profiling batch -------------------------------------------------------------------
//
// Each batch enables the range profiler, configures it with a fresh counter-data image, runs,
// decodes, and disables it again (BatchScope), so that no CUPTI state (and no pointer to a
// previous counter-data image) outlives its batch. With one object kept enabled across
// batches, a user-replay batch followed by a kernel-replay batch in one process crashed
// (SIGSEGV) on the H200.

class RangeProfiler::BatchScope {
 public:
  explicit BatchScope(Impl& impl) : impl_(impl) { impl_.enable(); }
  ~BatchScope() { impl_.disable(); }
  BatchScope(const BatchScope&) = delete;
  BatchScope& operator=(const BatchScope&) = delete;

 private:
  Impl& impl_;
};

void RangeProfiler::configure(std::size_t max_ranges, bool user_replay) {
  auto names = c_names(metrics_);
  Impl& s = *impl_;

  // A counter-data image sized for this batch, reset for every batch.
  CUpti_RangeProfiler_GetCounterDataSize_Params size{
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  size.pRangeProfilerObject = s.target;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = max_ranges;
  size.maxNumRangeTreeNodes = static_cast<uint32_t>(max_ranges);
  GPULAB_CUPTI_CHECK(cuptiRangeProfilerGetCounterDataSize(&size));
  s.counter_data.assign(size.counterDataSize, 0);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  init.pRangeProfilerObject = s.target;
  init.pCounterData = s.counter_data.data();
  init.counterDataSize = s.counter_data.size();
  GPULAB_CUPTI_CHECK(cuptiRangeProfilerCounterDataImageInitialize(&init));

  CUpti_RangeProfiler_SetConfig_Params config{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  config.pRangeProfilerObject = s.target;
  config.configSize = s.config_image.size();
  config.pConfig = s.config_image.data();
  config.counterDataImageSize = s.counter_data.size();
  config.pCounterDataImage = s.counter_data.data();
  config.range = CUPTI_AutoRange;  // one range per kernel launch, in either replay mode
  config.replayMode = user_replay ? CUPTI_UserReplay : CUPTI_KernelReplay;
  config.maxRangesPerPass = max_ranges;
  config.numNestingLevels = 1;  // auto range requires 1
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  GPULAB_CUPTI_COUNTERS(cuptiRangeProfilerSetConfig(&config));
}

void RangeProfiler::start() {
  CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
  start.pRangeProfilerObject = impl_->target;
  GPULAB_CUPTI_COUNTERS(cuptiRangeProfilerStart(&start));
}

bool RangeProfiler::stop() {
  CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
  stop.pRangeProfilerObject = impl_->target;
  GPULAB_CUPTI_CHECK(cuptiRangeProfilerStop(&stop));
  return stop.isAllPassSubmitted != 0;
}

void RangeProfiler::stop_after_error() noexcept {
  CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
  stop.pRangeProfilerObject = impl_->target;
  cuptiRangeProfilerStop(&stop);  // best effort: the original error is the one to report
}

std::vector<RangeValues> RangeProfiler::decode() {
  auto names = c_names(metrics_);
  Impl& s = *impl_;
  CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  decode.pRangeProfilerObject = s.target;
  GPULAB_CUPTI_CHECK(cuptiRangeProfilerDecodeData(&decode));
  dropped_ = decode.numOfRangeDropped;

  CUpti_RangeProfiler_GetCounterDataInfo_Params info{
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = s.counter_data.data();
  info.counterDataImageSize = s.counter_data.size();
  GPULAB_CUPTI_CHECK(cuptiRangeProfilerGetCounterDataInfo(&info));

  std::vector<RangeValues> out(info.numTotalRanges);
  std::vector<double> values(names.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    CUpti_RangeProfiler_CounterData_GetRangeInfo_Params range{
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE};
    range.pCounterDataImage = s.counter_data.data();
    range.counterDataImageSize = s.counter_data.size();
    range.rangeIndex = i;
    range.rangeDelimiter = "/";
    GPULAB_CUPTI_CHECK(cuptiRangeProfilerCounterDataGetRangeInfo(&range));
    out[i].range_name = range.rangeName ? range.rangeName : std::to_string(i);

    CUpti_Profiler_Host_EvaluateToGpuValues_Params eval{
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    eval.pHostObject = s.host;
    eval.pCounterDataImage = s.counter_data.data();
    eval.counterDataImageSize = s.counter_data.size();
    eval.rangeIndex = i;
    eval.ppMetricNames = names.data();
    eval.numMetrics = names.size();
    eval.pMetricValues = values.data();
    GPULAB_CUPTI_CHECK(cuptiProfilerHostEvaluateToGpuValues(&eval));
    for (std::size_t m = 0; m < names.size(); ++m)
      if (std::isfinite(values[m])) out[i].values[metrics_[m]] = values[m];
  }
  return out;
}

void RangeProfiler::begin_kernel_replay(std::size_t expected_kernels) {
  if (open_batch_) throw ApiError("CUPTI", 0, "a kernel-replay batch is already open");
  open_batch_ = std::make_unique<BatchScope>(*impl_);
  try {
    // Room for more kernels than declared (a library may launch extra ones): the caller
    // compares the count it gets back with what it expected.
    configure(expected_kernels + kSpareRanges, false);
    start();
  } catch (...) {
    open_batch_.reset();
    throw;
  }
}

std::vector<RangeValues> RangeProfiler::end_kernel_replay() {
  if (!open_batch_) throw ApiError("CUPTI", 0, "no kernel-replay batch is open");
  const std::unique_ptr<BatchScope> batch = std::move(open_batch_);  // disables when done
  stop();  // kernel replay submits every pass inside the launches
  return decode();
}

void RangeProfiler::abandon_kernel_replay() noexcept {
  if (!open_batch_) return;
  stop_after_error();
  open_batch_.reset();
}

std::vector<RangeValues> RangeProfiler::profile_kernels(const std::function<void()>& launch_kernels,
                                                        std::size_t expected_kernels) {
  begin_kernel_replay(expected_kernels);
  try {
    launch_kernels();
  } catch (...) {
    abandon_kernel_replay();
    throw;
  }
  return end_kernel_replay();
}

std::vector<RangeValues> RangeProfiler::replay_kernels(const std::function<void()>& launch_kernels,
                                                       std::size_t expected_kernels,
                                                       const PassHooks& hooks) {
  BatchScope batch(*impl_);
  const std::size_t leading = hooks.first_kernel ? 1 : 0;
  configure(leading + expected_kernels + kSpareRanges, true);
  // One iteration per pass: CUPTI reports when every pass of the configuration has run.
  for (int pass = 0;; ++pass) {
    if (pass > passes_) throw ApiError("CUPTI", 0, "user replay did not finish its passes");
    if (hooks.on_pass) hooks.on_pass(pass + 1, passes_);
    if (hooks.before_pass) hooks.before_pass();
    start();
    try {
      if (hooks.first_kernel) hooks.first_kernel();
      launch_kernels();
    } catch (...) {
      stop_after_error();
      throw;
    }
    if (stop()) break;
  }
  auto ranges = decode();
  if (ranges.size() < leading)
    throw ApiError("CUPTI", 0, "user replay recorded no range for the pass's first kernel");
  ranges.erase(ranges.begin(), ranges.begin() + static_cast<std::ptrdiff_t>(leading));
  return ranges;
}

}  // namespace gpulab::cupti
