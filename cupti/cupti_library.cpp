// The CUPTI functions gpulab calls, defined here as trampolines into libcupti, which is loaded at
// the first call (reports/base/lazy_library.hpp). The headers below declare them: a trampoline
// whose types differ from CUPTI's does not compile.
//
// The list must hold every CUPTI function cupti/ calls: a missing one is an undefined symbol at
// link time (gpulab does not link libcupti), and the CPU test
// LazyLibrary.CuptiResolvesEveryFunction resolves them all in the toolkit's libcupti.
#include "cupti/cupti_library.hpp"

#include <cupti.h>
#include <cupti_pcsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>

#include "reports/base/lazy_library.hpp"

// X(L, function, number of parameters)
#define GPULAB_CUPTI_FUNCTIONS(X, L)                                           \
  X(L, cuptiGetVersion, 1)                                                     \
  X(L, cuptiGetResultString, 2)                                                \
  X(L, cuptiGetTimestamp, 1)                                                   \
  /* callbacks: cupti/launch_recorder.cpp */                                   \
  X(L, cuptiSubscribe, 3)                                                      \
  X(L, cuptiUnsubscribe, 1)                                                    \
  X(L, cuptiEnableCallback, 4)                                                 \
  /* activity API: cupti/activity_tracer.cpp */                                \
  X(L, cuptiActivityRegisterCallbacks, 2)                                      \
  X(L, cuptiActivityEnable, 1)                                                 \
  X(L, cuptiActivityDisable, 1)                                                \
  X(L, cuptiActivityFlushAll, 1)                                               \
  X(L, cuptiActivityGetNextRecord, 3)                                          \
  X(L, cuptiActivityGetNumDroppedRecords, 3)                                   \
  X(L, cuptiActivityConfigureUnifiedMemoryCounter, 2)                          \
  /* profiler target and host API, range profiler: cupti/range_profiler.cpp */ \
  X(L, cuptiProfilerInitialize, 1)                                             \
  X(L, cuptiProfilerDeInitialize, 1)                                           \
  X(L, cuptiProfilerDeviceSupported, 1)                                        \
  X(L, cuptiDeviceGetChipName, 1)                                              \
  X(L, cuptiProfilerGetCounterAvailability, 1)                                 \
  X(L, cuptiProfilerHostInitialize, 1)                                         \
  X(L, cuptiProfilerHostDeinitialize, 1)                                       \
  X(L, cuptiProfilerHostConfigAddMetrics, 1)                                   \
  X(L, cuptiProfilerHostGetConfigImageSize, 1)                                 \
  X(L, cuptiProfilerHostGetConfigImage, 1)                                     \
  X(L, cuptiProfilerHostGetNumOfPasses, 1)                                     \
  X(L, cuptiProfilerHostEvaluateToGpuValues, 1)                                \
  X(L, cuptiRangeProfilerEnable, 1)                                            \
  X(L, cuptiRangeProfilerDisable, 1)                                           \
  X(L, cuptiRangeProfilerGetCounterDataSize, 1)                                \
  X(L, cuptiRangeProfilerCounterDataImageInitialize, 1)                        \
  X(L, cuptiRangeProfilerSetConfig, 1)                                         \
  X(L, cuptiRangeProfilerStart, 1)                                             \
  X(L, cuptiRangeProfilerStop, 1)                                              \
  X(L, cuptiRangeProfilerDecodeData, 1)                                        \
  X(L, cuptiRangeProfilerGetCounterDataInfo, 1)                                \
  X(L, cuptiRangeProfilerCounterDataGetRangeInfo, 1)                           \
  /* per-instruction counters: cupti/sass_metrics.cpp */                       \
  X(L, cuptiSassMetricsGetNumOfMetrics, 1)                                     \
  X(L, cuptiSassMetricsGetMetrics, 1)                                          \
  X(L, cuptiSassMetricsSetConfig, 1)                                           \
  X(L, cuptiSassMetricsUnsetConfig, 1)                                         \
  X(L, cuptiSassMetricsEnable, 1)                                              \
  X(L, cuptiSassMetricsDisable, 1)                                             \
  X(L, cuptiSassMetricsGetDataProperties, 1)                                   \
  X(L, cuptiSassMetricsFlushData, 1)                                           \
  /* warp-stall samples: cupti/pc_sampling.cpp */                              \
  X(L, cuptiPCSamplingGetNumStallReasons, 1)                                   \
  X(L, cuptiPCSamplingGetStallReasons, 1)                                      \
  X(L, cuptiPCSamplingEnable, 1)                                               \
  X(L, cuptiPCSamplingDisable, 1)                                              \
  X(L, cuptiPCSamplingSetConfigurationAttribute, 1)                            \
  X(L, cuptiPCSamplingStart, 1)                                                \
  X(L, cuptiPCSamplingStop, 1)                                                 \
  X(L, cuptiPCSamplingGetData, 1)                                              \
  /* cubins and their lines: cupti/cubin_store.cpp */                          \
  X(L, cuptiGetCubinCrc, 1)                                                    \
  X(L, cuptiGetSassToSourceCorrelation, 1)

namespace {

// GPULAB_CUPTI_SONAME, _DIRS and _PACKAGE come from the build (CMakeLists.txt).
constexpr gpulab::LazyLibrarySpec kCupti{
    "CUPTI",
    GPULAB_CUPTI_SONAME,
    GPULAB_CUPTI_DIRS,
    "GPULAB_CUPTI_LIBRARY",
    "libnvperf_host.so",
    "to read counters and trace kernels (run, diagnose, selftest)",
    "install the CUDA toolkit's CUPTI (package " GPULAB_CUPTI_PACKAGE ")"};

}  // namespace

GPULAB_LAZY_LIBRARY(cupti_library, GPULAB_CUPTI_FUNCTIONS, kCupti)

namespace gpulab::cupti {

void require_library() { cupti_library().require(); }

bool library_available() noexcept { return cupti_library().available(); }

std::string library_path() { return cupti_library().path(); }

}  // namespace gpulab::cupti
