#include "cupti/sass_metrics.hpp"

#include <cstdint>
#include <limits>
#include <map>
#include <set>

#include <cupti_profiler_target.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>
#include <fmt/format.h>

#include "cupti/cuda_context.hpp"
#include "cupti/cupti_check.hpp"
#include "cupti/range_profiler.hpp"

namespace gpulab::cupti {
namespace {

namespace c = report::source_counter;

// gpulab's counters and the SASS metrics that count them, most specific first: the first
// alternative whose metrics the chip all lists is used, and its metrics add up
// (docs/source-lines.md lists what each chip offered).
struct Alternative {
  std::vector<const char*> metrics;
};
struct CounterChoice {
  const char* counter;
  std::vector<Alternative> alternatives;
};

const std::vector<CounterChoice>& choices() {
  static const std::vector<CounterChoice> table = {
      {c::inst_executed, {{{"smsp__sass_inst_executed"}}}},
      {c::thread_inst_executed, {{{"smsp__sass_thread_inst_executed"}}}},
      {c::global_requests,
       {{{"smsp__sass_inst_executed_op_global"}},
        {{"smsp__sass_inst_executed_op_global_ld", "smsp__sass_inst_executed_op_global_st"}}}},
      {c::global_sectors,
       {{{"smsp__sass_sectors_mem_global"}},
        {{"smsp__sass_sectors_mem_global_op_ld", "smsp__sass_sectors_mem_global_op_st"}}}},
      {c::shared_requests,
       {{{"smsp__sass_inst_executed_op_shared"}},
        {{"smsp__sass_inst_executed_op_shared_ld", "smsp__sass_inst_executed_op_shared_st"}}}},
      {c::shared_wavefronts, {{{"smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared"}}}},
      {c::local_loads, {{{"smsp__sass_inst_executed_op_local_ld"}}}},
      {c::local_stores, {{{"smsp__sass_inst_executed_op_local_st"}}}},
      {c::divergent_branches, {{{"smsp__sass_branch_targets_threads_divergent"}}}},
  };
  return table;
}

constexpr std::uint64_t kNoMetric = std::numeric_limits<std::uint64_t>::max();

}  // namespace

SassMetrics::SassMetrics(int device) : device_(device) {
  CUpti_Profiler_Initialize_Params init{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  GPULAB_CUPTI_CHECK(cuptiProfilerInitialize(&init));
  CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip.deviceIndex = static_cast<size_t>(device);
  GPULAB_CUPTI_CHECK(cuptiDeviceGetChipName(&chip));
  chip_ = chip.pChipName;

  CUpti_SassMetrics_GetNumOfMetrics_Params count{
      CUpti_SassMetrics_GetNumOfMetrics_Params_STRUCT_SIZE};
  count.pChipName = chip_.c_str();
  const CUptiResult r = cuptiSassMetricsGetNumOfMetrics(&count);
  if (r != CUPTI_SUCCESS)
    throw CountersUnavailable(
        fmt::format("per-instruction counters unavailable on {} ({})", chip_, describe(r)));
  std::vector<CUpti_SassMetrics_MetricDetails> listed(count.numOfMetrics);
  CUpti_SassMetrics_GetMetrics_Params list{CUpti_SassMetrics_GetMetrics_Params_STRUCT_SIZE};
  list.pChipName = chip_.c_str();
  list.numOfMetrics = listed.size();
  list.pMetricsList = listed.data();
  GPULAB_CUPTI_CHECK(cuptiSassMetricsGetMetrics(&list));
  std::map<std::string, std::uint64_t> id_of;
  for (const auto& m : listed) id_of[m.pMetricName] = m.metricId;

  for (const auto& choice : choices()) {
    const Alternative* found = nullptr;
    for (const auto& a : choice.alternatives) {
      bool all = true;
      for (const char* m : a.metrics) all = all && id_of.count(m) > 0;
      if (all) {
        found = &a;
        break;
      }
    }
    if (!found) {
      left_out_.push_back(choice.counter);
      continue;
    }
    std::string names;
    for (const char* m : found->metrics) {
      metrics_.push_back({id_of.at(m), choice.counter});
      names += (names.empty() ? "" : " + ") + std::string(m);
    }
    chosen_.push_back(fmt::format("{}: {}", choice.counter, names));
  }
  if (metrics_.empty())
    throw CountersUnavailable(fmt::format(
        "per-instruction counters unavailable: {} lists none of the SASS metrics gpulab reads",
        chip_));

  std::vector<CUpti_SassMetrics_Config> configs;
  for (const auto& m : metrics_)
    configs.push_back({m.id, CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU});
  CUpti_SassMetricsSetConfig_Params config{CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE};
  config.numOfMetricConfig = configs.size();
  config.pConfigs = configs.data();
  config.deviceIndex = static_cast<uint32_t>(device_);
  const CUptiResult set = cuptiSassMetricsSetConfig(&config);
  if (set != CUPTI_SUCCESS)
    throw CountersUnavailable(fmt::format(
        "per-instruction counters unavailable ({}): CUPTI takes one configuration per process",
        describe(set)));
  configured_ = true;
}

SassMetrics::~SassMetrics() {
  if (configured_) {
    CUpti_SassMetricsUnsetConfig_Params unset{CUpti_SassMetricsUnsetConfig_Params_STRUCT_SIZE};
    unset.deviceIndex = static_cast<uint32_t>(device_);
    GPULAB_CUPTI_CHECK_NOEXCEPT(cuptiSassMetricsUnsetConfig(&unset));
  }
  CUpti_Profiler_DeInitialize_Params deinit{CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
  GPULAB_CUPTI_CHECK_NOEXCEPT(cuptiProfilerDeInitialize(&deinit));
}

std::vector<report::InstructionRecord> SassMetrics::collect(const std::function<void()>& work) {
  const CUcontext ctx = current_context();
  std::map<std::uint64_t, std::string> counter_of;
  for (const auto& m : metrics_) counter_of[m.id] = m.counter;

  // Enabled from here to the end of this scope, whatever `work` throws.
  struct Enabled {
    CUcontext ctx;
    bool on = false;
    ~Enabled() {
      if (!on) return;
      CUpti_SassMetricsDisable_Params off{CUpti_SassMetricsDisable_Params_STRUCT_SIZE};
      off.ctx = ctx;
      GPULAB_CUPTI_CHECK_NOEXCEPT(cuptiSassMetricsDisable(&off));
    }
  } enabled{ctx};
  CUpti_SassMetricsEnable_Params enable{CUpti_SassMetricsEnable_Params_STRUCT_SIZE};
  enable.ctx = ctx;
  enable.enableLazyPatching = 1;  // patch only the functions `work` runs
  GPULAB_CUPTI_CHECK(cuptiSassMetricsEnable(&enable));
  enabled.on = true;

  work();

  CUpti_SassMetricsGetDataProperties_Params props{
      CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE};
  props.ctx = ctx;
  GPULAB_CUPTI_CHECK(cuptiSassMetricsGetDataProperties(&props));
  std::vector<report::InstructionRecord> out;
  if (props.numOfPatchedInstructionRecords == 0) return out;

  // Room for every metric's instances in each record; slots CUPTI leaves alone keep kNoMetric.
  const std::size_t per_record = props.numOfInstances * metrics_.size();
  std::vector<CUpti_SassMetrics_Data> data(props.numOfPatchedInstructionRecords);
  std::vector<CUpti_SassMetrics_InstanceValue> values(
      data.size() * per_record, CUpti_SassMetrics_InstanceValue{kNoMetric, 0});
  for (std::size_t i = 0; i < data.size(); ++i) {
    data[i].structSize = sizeof(CUpti_SassMetrics_Data);
    data[i].pInstanceValues = &values[i * per_record];
  }
  CUpti_SassMetricsFlushData_Params flush{CUpti_SassMetricsFlushData_Params_STRUCT_SIZE};
  flush.ctx = ctx;
  flush.numOfPatchedInstructionRecords = data.size();
  flush.numOfInstances = props.numOfInstances;
  flush.pMetricsData = data.data();
  GPULAB_CUPTI_CHECK(cuptiSassMetricsFlushData(&flush));

  for (const auto& d : data) {
    report::InstructionRecord r;
    r.cubin_crc = d.cubinCrc;
    r.function = d.functionName ? d.functionName : "";
    r.offset = d.pcOffset;
    for (std::size_t j = 0; j < per_record; ++j) {
      const auto& v = d.pInstanceValues[j];
      if (auto it = counter_of.find(v.metricId); it != counter_of.end())
        r.counters[it->second] += static_cast<double>(v.value);
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace gpulab::cupti
