#include "cupti/pc_sampling.hpp"

#include <map>
#include <memory>
#include <string>

#include <cupti_pcsampling.h>
#include <fmt/format.h>

#include "cupti/cuda_context.hpp"
#include "cupti/cupti_check.hpp"
#include "cupti/range_profiler.hpp"

namespace gpulab::cupti {
namespace {

namespace c = report::source_counter;

// Room for this many distinct instructions per read; a kernel with more is read in several.
constexpr std::size_t kPcsPerRead = 16384;

// A CUpti_PCSamplingData with room for kPcsPerRead instructions of `reasons` reasons each.
class SamplingBuffer {
 public:
  explicit SamplingBuffer(std::size_t reasons)
      : pcs_(kPcsPerRead), reasons_(kPcsPerRead * reasons), per_pc_(reasons) {
    data_.size = sizeof(CUpti_PCSamplingData);
    data_.collectNumPcs = kPcsPerRead;
    data_.pPcData = pcs_.data();
    reset();
  }
  CUpti_PCSamplingData* get() { return &data_; }
  // Ready for CUPTI to fill again.
  void reset() {
    data_.totalNumPcs = 0;
    data_.remainingNumPcs = 0;
    for (std::size_t i = 0; i < pcs_.size(); ++i) {
      pcs_[i] = CUpti_PCSamplingPCData{};
      pcs_[i].size = sizeof(CUpti_PCSamplingPCData);
      pcs_[i].stallReasonCount = per_pc_;
      pcs_[i].stallReason = &reasons_[i * per_pc_];
    }
  }

 private:
  CUpti_PCSamplingData data_{};
  std::vector<CUpti_PCSamplingPCData> pcs_;
  std::vector<CUpti_PCSamplingStallReason> reasons_;
  std::size_t per_pc_;
};

struct StallReasons {
  std::vector<uint32_t> indices;
  std::map<uint32_t, std::string> names;  // shortened: "long_scoreboard"
};

StallReasons stall_reasons(CUcontext ctx) {
  size_t count = 0;
  CUpti_PCSamplingGetNumStallReasonsParams n{CUpti_PCSamplingGetNumStallReasonsParamsSize};
  n.ctx = ctx;
  n.numStallReasons = &count;
  const CUptiResult r = cuptiPCSamplingGetNumStallReasons(&n);
  if (r != CUPTI_SUCCESS)
    throw CountersUnavailable(fmt::format("warp-stall sampling unavailable ({})", describe(r)));
  StallReasons out;
  out.indices.resize(count);
  std::vector<std::vector<char>> text(count, std::vector<char>(CUPTI_STALL_REASON_STRING_SIZE));
  std::vector<char*> names(count);
  for (size_t i = 0; i < count; ++i) names[i] = text[i].data();
  CUpti_PCSamplingGetStallReasonsParams p{CUpti_PCSamplingGetStallReasonsParamsSize};
  p.ctx = ctx;
  p.numStallReasons = count;
  p.stallReasonIndex = out.indices.data();
  p.stallReasons = names.data();
  GPULAB_CUPTI_CHECK(cuptiPCSamplingGetStallReasons(&p));
  for (size_t i = 0; i < count; ++i) {
    std::string name = names[i];
    for (const char* prefix : {"smsp__pcsamp_warps_issue_stalled_", "smsp__pcsamp_"})
      if (name.rfind(prefix, 0) == 0) {
        name = name.substr(std::string(prefix).size());
        break;
      }
    out.names[out.indices[i]] = name;
  }
  return out;
}

// Whether a "reason" of the chip's list is one: GH100's list also holds the sample count and
// the dropped samples, and each reason again as "_not_issued" (the samples of it in which the
// sub-partition issued nothing), which would count those samples twice.
bool is_reason(const std::string& name) {
  static const std::string not_issued = "_not_issued";
  if (name == "sample_count" || name == "samples_data_dropped") return false;
  return name.size() < not_issued.size() ||
         name.compare(name.size() - not_issued.size(), not_issued.size(), not_issued) != 0;
}

// Adds what `data` holds to `out`.
void take(const CUpti_PCSamplingData& data, const StallReasons& reasons, PcSamples& out) {
  for (size_t i = 0; i < data.totalNumPcs; ++i) {
    const CUpti_PCSamplingPCData& pc = data.pPcData[i];
    report::InstructionRecord r;
    r.cubin_crc = pc.cubinCrc;
    r.function = pc.functionName ? pc.functionName : "";
    r.offset = pc.pcOffset;
    double all = 0;
    for (size_t j = 0; j < pc.stallReasonCount; ++j) {
      const auto& s = pc.stallReason[j];
      if (s.samples == 0) continue;
      auto name = reasons.names.find(s.pcSamplingStallReasonIndex);
      if (name == reasons.names.end() || !is_reason(name->second)) continue;
      r.counters[c::stall_prefix + name->second] += s.samples;
      all += s.samples;
    }
    r.counters[c::samples] = all;
    out.records.push_back(std::move(r));
  }
  out.samples += data.totalSamples;
  out.dropped += data.droppedSamples;
}

void set_attributes(CUcontext ctx, std::vector<CUpti_PCSamplingConfigurationInfo>& attributes) {
  CUpti_PCSamplingConfigurationInfoParams p{CUpti_PCSamplingConfigurationInfoParamsSize};
  p.ctx = ctx;
  p.numAttributes = attributes.size();
  p.pPCSamplingConfigurationInfo = attributes.data();
  GPULAB_CUPTI_CHECK(cuptiPCSamplingSetConfigurationAttribute(&p));
  for (const auto& a : attributes)
    if (a.attributeStatus != CUPTI_SUCCESS)
      throw ApiError("CUPTI", static_cast<int>(a.attributeStatus),
                     fmt::format("PC sampling attribute {}: {}", static_cast<int>(a.attributeType),
                                 describe(a.attributeStatus)));
}

}  // namespace

struct PcSampler::State {
  CUcontext ctx = nullptr;
  bool enabled = false;
  int period_log2 = kDefaultPeriodLog2;
  std::uint64_t period_cycles = 0;
  StallReasons reasons;
  // CUPTI fills `configured` by itself at each stop; reads go to `read`.
  std::unique_ptr<SamplingBuffer> configured, read;

  // Enables sampling on the context and configures it: at construction, and again after a
  // pause (CUPTI forgets the configuration when sampling is disabled).
  void enable() {
    if (enabled) return;
    CUpti_PCSamplingEnableParams on{CUpti_PCSamplingEnableParamsSize};
    on.ctx = ctx;
    const CUptiResult r = cuptiPCSamplingEnable(&on);
    if (r != CUPTI_SUCCESS)
      throw CountersUnavailable(fmt::format("warp-stall sampling unavailable ({})", describe(r)));
    enabled = true;
    try {
      if (!configured) {
        reasons = stall_reasons(ctx);
        configured = std::make_unique<SamplingBuffer>(reasons.indices.size());
        read = std::make_unique<SamplingBuffer>(reasons.indices.size());
      }
      configure();
    } catch (...) {
      disable();
      throw;
    }
  }

  void configure() {
    std::vector<CUpti_PCSamplingConfigurationInfo> attributes(5);
    attributes[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    attributes[0].attributeData.collectionModeData.collectionMode =
        CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED;
    attributes[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
    attributes[1].attributeData.samplingPeriodData.samplingPeriod =
        static_cast<uint32_t>(period_log2);
    attributes[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
    attributes[2].attributeData.stallReasonData.stallReasonCount = reasons.indices.size();
    attributes[2].attributeData.stallReasonData.pStallReasonIndex = reasons.indices.data();
    attributes[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    attributes[3].attributeData.samplingDataBufferData.samplingDataBuffer = configured->get();
    attributes[4].attributeType =
        CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
    attributes[4].attributeData.enableStartStopControlData.enableStartStopControl = 1;
    set_attributes(ctx, attributes);
  }

  void disable() noexcept {
    if (!enabled) return;
    CUpti_PCSamplingDisableParams off{CUpti_PCSamplingDisableParamsSize};
    off.ctx = ctx;
    GPULAB_CUPTI_CHECK_NOEXCEPT(cuptiPCSamplingDisable(&off));
    enabled = false;
  }
};

PcSampler::PcSampler(int period_log2) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.ctx = current_context();
  s.period_log2 = period_log2;
  s.period_cycles = std::uint64_t{1} << period_log2;
  s.enable();
}

PcSampler::~PcSampler() { state_->disable(); }

void PcSampler::pause() noexcept { state_->disable(); }

void PcSampler::resume() { state_->enable(); }

PcSamples PcSampler::sample(const std::function<void()>& work) {
  State& s = *state_;
  s.enable();
  s.configured->reset();
  CUpti_PCSamplingStartParams start{CUpti_PCSamplingStartParamsSize};
  start.ctx = s.ctx;
  GPULAB_CUPTI_CHECK(cuptiPCSamplingStart(&start));
  CUpti_PCSamplingStopParams stop{CUpti_PCSamplingStopParamsSize};
  stop.ctx = s.ctx;
  try {
    work();
  } catch (...) {
    GPULAB_CUPTI_CHECK_NOEXCEPT(cuptiPCSamplingStop(&stop));
    throw;
  }
  GPULAB_CUPTI_CHECK(cuptiPCSamplingStop(&stop));

  // Read through cuptiPCSamplingGetData only: after Stop, CUPTI 13.0 has put the range's
  // instructions into the configured buffer and returns the same ones again from the first read
  // (measured on the H100), so taking both would count every sample twice.
  PcSamples out;
  out.period_cycles = s.period_cycles;
  CUpti_PCSamplingGetDataParams get{CUpti_PCSamplingGetDataParamsSize};
  get.ctx = s.ctx;
  get.pcSamplingData = s.read->get();
  // What did not fit the configured buffer, one read at a time, until a read brings nothing.
  for (int reads = 0; reads < 4096; ++reads) {
    s.read->reset();
    GPULAB_CUPTI_CHECK(cuptiPCSamplingGetData(&get));
    if (s.read->get()->totalNumPcs == 0 && s.read->get()->remainingNumPcs == 0) break;
    take(*s.read->get(), s.reasons, out);
  }
  return out;
}

}  // namespace gpulab::cupti
