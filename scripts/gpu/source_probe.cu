// What a GPU offers for source-level data, printed for docs/source-lines.md: its chip name, the
// SASS metrics CUPTI lists for it, its PC-sampling stall reasons, and on two small kernels built
// with -lineinfo the per-instruction records, the stall samples (from the configured buffer and
// from each read), and the line CUPTI correlates each instruction with. Built and run by
// scripts/gpu/source_lines.sh; writes the captured cubins to the folder it is given.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <cupti_pcsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#define CK(x)                                             \
  do {                                                    \
    CUptiResult r_ = (x);                                 \
    if (r_ != CUPTI_SUCCESS) {                            \
      const char* s;                                      \
      cuptiGetResultString(r_, &s);                       \
      printf("FAIL %s: %s (line %d)\n", #x, s, __LINE__); \
    }                                                     \
  } while (0)
#define CU(x)                                                   \
  do {                                                          \
    cudaError_t e_ = (x);                                       \
    if (e_ != cudaSuccess) {                                    \
      printf("CUDA FAIL %s: %s\n", #x, cudaGetErrorString(e_)); \
      exit(1);                                                  \
    }                                                           \
  } while (0)

struct Cubin {
  std::vector<char> bytes;
};
std::map<uint64_t, Cubin> g_cubins;

void CUPTIAPI on_cb(void*, CUpti_CallbackDomain d, CUpti_CallbackId id, const void* data) {
  if (d == CUPTI_CB_DOMAIN_RESOURCE && id == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
    auto* rd = static_cast<const CUpti_ResourceData*>(data);
    auto* m = static_cast<const CUpti_ModuleResourceData*>(rd->resourceDescriptor);
    CUpti_GetCubinCrcParams p = {CUpti_GetCubinCrcParamsSize};
    p.cubin = m->pCubin;
    p.cubinSize = m->cubinSize;
    CK(cuptiGetCubinCrc(&p));
    printf("module loaded: id %u size %zu crc %llu\n", m->moduleId, m->cubinSize,
           (unsigned long long)p.cubinCrc);
    g_cubins[p.cubinCrc].bytes.assign(m->pCubin, m->pCubin + m->cubinSize);
  }
}

__global__ void transpose_naive(const float* in, float* out, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < n && y < n) {
    float v = in[y * n + x];
    out[x * n + y] = v;  // strided store
  }
}

__global__ void shared_conflicts(const float* in, float* out, int n) {
  __shared__ float tile[32][32];
  int x = blockIdx.x * 32 + threadIdx.x;
  int y = blockIdx.y * 32 + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = in[y * n + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  out[y * n + x] = tile[threadIdx.x][threadIdx.y];  // bank conflicts
}

const int N = 4096;
float *d_in, *d_out;
void launch() {
  dim3 b(32, 32), g(N / 32, N / 32);
  transpose_naive<<<g, b>>>(d_in, d_out, N);
  shared_conflicts<<<g, b>>>(d_in, d_out, N);
  CU(cudaDeviceSynchronize());
}

void correlate(uint64_t crc, const char* fn, uint64_t pc, std::string& where) {
  auto it = g_cubins.find(crc);
  if (it == g_cubins.end()) {
    where = "no cubin";
    return;
  }
  CUpti_GetSassToSourceCorrelationParams p = {CUpti_GetSassToSourceCorrelationParamsSize};
  p.cubin = it->second.bytes.data();
  p.cubinSize = it->second.bytes.size();
  p.functionName = fn;
  p.pcOffset = pc;
  CUptiResult r = cuptiGetSassToSourceCorrelation(&p);
  if (r != CUPTI_SUCCESS) {
    const char* s;
    cuptiGetResultString(r, &s);
    where = s;
    return;
  }
  where = std::string(p.dirName ? p.dirName : "") + "|" + (p.fileName ? p.fileName : "") + ":" +
          std::to_string(p.lineNumber);
  free(p.fileName);
  free(p.dirName);
}

// PC sampling: enabled, its stall reasons read (they need it enabled), configured.
struct Sampling {
  CUcontext ctx;
  std::vector<uint32_t> index;
  std::map<uint32_t, std::string> reason;
  CUpti_PCSamplingData *configured = nullptr, *read = nullptr;
};
CUpti_PCSamplingData* make_buffer(size_t pcs, size_t reasons) {
  auto* d = (CUpti_PCSamplingData*)calloc(1, sizeof(CUpti_PCSamplingData));
  d->size = sizeof(CUpti_PCSamplingData);
  d->collectNumPcs = pcs;
  d->pPcData = (CUpti_PCSamplingPCData*)calloc(pcs, sizeof(CUpti_PCSamplingPCData));
  for (size_t i = 0; i < pcs; ++i) {
    d->pPcData[i].size = sizeof(CUpti_PCSamplingPCData);
    d->pPcData[i].stallReason =
        (CUpti_PCSamplingStallReason*)calloc(reasons, sizeof(CUpti_PCSamplingStallReason));
    d->pPcData[i].stallReasonCount = reasons;
  }
  return d;
}
void pc_enable(Sampling& s) {
  CUpti_PCSamplingEnableParams pe = {CUpti_PCSamplingEnableParamsSize};
  pe.ctx = s.ctx;
  CK(cuptiPCSamplingEnable(&pe));
  size_t nsr = 0;
  CUpti_PCSamplingGetNumStallReasonsParams ns = {CUpti_PCSamplingGetNumStallReasonsParamsSize};
  ns.ctx = s.ctx;
  ns.numStallReasons = &nsr;
  CK(cuptiPCSamplingGetNumStallReasons(&ns));
  s.index.resize(nsr);
  std::vector<char*> names(nsr);
  for (auto& n : names) n = (char*)calloc(CUPTI_STALL_REASON_STRING_SIZE, 1);
  CUpti_PCSamplingGetStallReasonsParams sr = {CUpti_PCSamplingGetStallReasonsParamsSize};
  sr.ctx = s.ctx;
  sr.numStallReasons = nsr;
  sr.stallReasonIndex = s.index.data();
  sr.stallReasons = names.data();
  CK(cuptiPCSamplingGetStallReasons(&sr));
  printf("== %zu stall reasons\n", nsr);
  for (size_t i = 0; i < nsr; ++i) {
    printf("stall %u %s\n", s.index[i], names[i]);
    s.reason[s.index[i]] = names[i];
  }
  s.configured = make_buffer(4096, nsr);
  s.read = make_buffer(4096, nsr);
  CUpti_PCSamplingConfigurationInfo a[5] = {};
  a[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
  a[0].attributeData.collectionModeData.collectionMode =
      CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED;
  a[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
  a[1].attributeData.samplingPeriodData.samplingPeriod = 10;
  a[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
  a[2].attributeData.stallReasonData.stallReasonCount = nsr;
  a[2].attributeData.stallReasonData.pStallReasonIndex = s.index.data();
  a[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
  a[3].attributeData.samplingDataBufferData.samplingDataBuffer = s.configured;
  a[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
  a[4].attributeData.enableStartStopControlData.enableStartStopControl = 1;
  CUpti_PCSamplingConfigurationInfoParams cp = {CUpti_PCSamplingConfigurationInfoParamsSize};
  cp.ctx = s.ctx;
  cp.numAttributes = 5;
  cp.pPCSamplingConfigurationInfo = a;
  CK(cuptiPCSamplingSetConfigurationAttribute(&cp));
  for (auto& x : a)
    if (x.attributeStatus != CUPTI_SUCCESS)
      printf("attr %d status %d\n", x.attributeType, x.attributeStatus);
}
void dump(Sampling& s, const char* what, CUpti_PCSamplingData* d) {
  printf(
      "%s: totalNumPcs %zu remaining %zu totalSamples %llu dropped %llu nonUser %llu full %d range "
      "%llu\n",
      what, d->totalNumPcs, d->remainingNumPcs, (unsigned long long)d->totalSamples,
      (unsigned long long)d->droppedSamples, (unsigned long long)d->nonUsrKernelsTotalSamples,
      d->hardwareBufferFull, (unsigned long long)d->rangeId);
  std::map<std::string, uint64_t> per_fn;
  for (size_t i = 0; i < d->totalNumPcs; ++i) {
    auto& p = d->pPcData[i];
    uint64_t n = 0;
    std::string rs;
    for (size_t j = 0; j < p.stallReasonCount; ++j) {
      n += p.stallReason[j].samples;
      if (p.stallReason[j].samples)
        rs += " " + s.reason[p.stallReason[j].pcSamplingStallReasonIndex] + "=" +
              std::to_string(p.stallReason[j].samples);
    }
    per_fn[p.functionName ? p.functionName : "?"] += n;
    std::string w;
    correlate(p.cubinCrc, p.functionName, p.pcOffset, w);
    if (i < 40)
      printf("  pc %s 0x%llx at %s: %llu%s\n", p.functionName, (unsigned long long)p.pcOffset,
             w.c_str(), (unsigned long long)n, rs.c_str());
  }
  for (auto& [f, n] : per_fn) printf("  fn %s samples %llu\n", f.c_str(), (unsigned long long)n);
}
void pc_sample(Sampling& s) {
  CUpti_PCSamplingStartParams st = {CUpti_PCSamplingStartParamsSize};
  st.ctx = s.ctx;
  CK(cuptiPCSamplingStart(&st));
  launch();
  CUpti_PCSamplingStopParams sp = {CUpti_PCSamplingStopParamsSize};
  sp.ctx = s.ctx;
  CK(cuptiPCSamplingStop(&sp));
  dump(s, "configured buffer after stop", s.configured);
  CUpti_PCSamplingGetDataParams gd = {CUpti_PCSamplingGetDataParamsSize};
  gd.ctx = s.ctx;
  gd.pcSamplingData = s.read;
  for (int k = 0; k < 5; ++k) {
    s.read->totalNumPcs = 0;
    CUptiResult r = cuptiPCSamplingGetData(&gd);
    if (r != CUPTI_SUCCESS) {
      const char* e;
      cuptiGetResultString(r, &e);
      printf("GetData %d: %s\n", k, e);
      break;
    }
    char w[64];
    snprintf(w, 64, "GetData %d", k);
    dump(s, w, s.read);
    if (s.read->totalNumPcs == 0 && s.read->remainingNumPcs == 0) break;
  }
}

// SASS metrics: configured once, then collected twice (enable, launch, flush, disable).
void sass_twice(CUcontext ctx, const char* chip) {
  const char* names[] = {"smsp__sass_inst_executed",
                         "smsp__sass_thread_inst_executed",
                         "smsp__sass_inst_executed_op_global",
                         "smsp__sass_sectors_mem_global",
                         "smsp__sass_inst_executed_op_shared",
                         "smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared",
                         "smsp__sass_inst_executed_op_local_ld",
                         "smsp__sass_inst_executed_op_local_st"};
  std::vector<CUpti_SassMetrics_Config> cfg;
  std::map<uint64_t, std::string> id2name;
  for (const char* n : names) {
    CUpti_SassMetrics_GetProperties_Params pp = {
        CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE};
    pp.pChipName = chip;
    pp.pMetricName = n;
    CK(cuptiSassMetricsGetProperties(&pp));
    cfg.push_back({pp.metric.metricId, CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU});
    id2name[pp.metric.metricId] = n;
  }
  CUpti_SassMetricsSetConfig_Params sc = {CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE};
  sc.numOfMetricConfig = cfg.size();
  sc.pConfigs = cfg.data();
  sc.deviceIndex = 0;
  CK(cuptiSassMetricsSetConfig(&sc));
  for (int round = 0; round < 2; ++round) {
    CUpti_SassMetricsEnable_Params en = {CUpti_SassMetricsEnable_Params_STRUCT_SIZE};
    en.ctx = ctx;
    en.enableLazyPatching = 1;
    CK(cuptiSassMetricsEnable(&en));
    launch();
    CUpti_SassMetricsGetDataProperties_Params dp = {
        CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE};
    dp.ctx = ctx;
    CK(cuptiSassMetricsGetDataProperties(&dp));
    printf("== SASS round %d: %zu records, %zu instances\n", round,
           dp.numOfPatchedInstructionRecords, dp.numOfInstances);
    size_t per = dp.numOfInstances * cfg.size();
    std::vector<CUpti_SassMetrics_Data> data(dp.numOfPatchedInstructionRecords);
    std::vector<CUpti_SassMetrics_InstanceValue> vals(data.size() * per, {UINT64_MAX, 0});
    for (size_t i = 0; i < data.size(); ++i) {
      data[i].structSize = sizeof(CUpti_SassMetrics_Data);
      data[i].pInstanceValues = &vals[i * per];
    }
    CUpti_SassMetricsFlushData_Params fd = {CUpti_SassMetricsFlushData_Params_STRUCT_SIZE};
    fd.ctx = ctx;
    fd.numOfPatchedInstructionRecords = data.size();
    fd.numOfInstances = dp.numOfInstances;
    fd.pMetricsData = data.data();
    if (!data.empty()) CK(cuptiSassMetricsFlushData(&fd));
    std::map<std::string, double> totals;
    for (size_t i = 0; i < data.size(); ++i) {
      std::string line, w;
      correlate(data[i].cubinCrc, data[i].functionName, data[i].pcOffset, w);
      for (size_t j = 0; j < per; ++j) {
        auto& v = data[i].pInstanceValues[j];
        if (!id2name.count(v.metricId)) continue;
        if (v.value) line += " " + id2name[v.metricId].substr(11) + "=" + std::to_string(v.value);
        totals[std::string(data[i].functionName) + " " + id2name[v.metricId]] += v.value;
      }
      if (round == 0)
        printf("rec %s pc=0x%x at %s:%s\n", data[i].functionName, data[i].pcOffset, w.c_str(),
               line.c_str());
    }
    for (auto& [k, v] : totals) printf("total %s = %.0f\n", k.c_str(), v);
    CUpti_SassMetricsDisable_Params di = {CUpti_SassMetricsDisable_Params_STRUCT_SIZE};
    di.ctx = ctx;
    CK(cuptiSassMetricsDisable(&di));
  }
  CUpti_SassMetricsUnsetConfig_Params us = {CUpti_SassMetricsUnsetConfig_Params_STRUCT_SIZE};
  us.deviceIndex = 0;
  CK(cuptiSassMetricsUnsetConfig(&us));
}

// argv: OUT_DIR [early|late]: PC sampling enabled before the kernels' module loads, or after it
// loaded and the SASS metrics ran.
int main(int argc, char** argv) {
  const char* out = argc > 1 ? argv[1] : ".";
  const bool early = argc > 2 && std::string(argv[2]) == "early";
  printf("== mode %s\n", early ? "early" : "late");
  CUpti_SubscriberHandle sub;
  CK(cuptiSubscribe(&sub, on_cb, nullptr));
  CK(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RESOURCE));
  CU(cudaSetDevice(0));
  CU(cudaFree(0));
  Sampling s;
  cuCtxGetCurrent(&s.ctx);
  CU(cudaMalloc(&d_in, sizeof(float) * N * N));
  CU(cudaMalloc(&d_out, sizeof(float) * N * N));
  CU(cudaMemset(d_in, 1, sizeof(float) * N * N));
  if (early) pc_enable(s);
  launch();  // loads the module (lazy loading)
  printf("cubins captured: %zu\n", g_cubins.size());
  for (auto& [crc, c] : g_cubins) {
    std::string path = std::string(out) + "/cubin_" + std::to_string(crc) + ".cubin";
    FILE* f = fopen(path.c_str(), "wb");
    fwrite(c.bytes.data(), 1, c.bytes.size(), f);
    fclose(f);
  }
  if (early) pc_sample(s);

  CUpti_Profiler_Initialize_Params ip = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  CK(cuptiProfilerInitialize(&ip));
  CUpti_Device_GetChipName_Params cn = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  cn.deviceIndex = 0;
  CK(cuptiDeviceGetChipName(&cn));
  printf("chip: %s\n", cn.pChipName);
  CUpti_SassMetrics_GetNumOfMetrics_Params nm = {
      CUpti_SassMetrics_GetNumOfMetrics_Params_STRUCT_SIZE};
  nm.pChipName = cn.pChipName;
  CK(cuptiSassMetricsGetNumOfMetrics(&nm));
  std::vector<CUpti_SassMetrics_MetricDetails> md(nm.numOfMetrics);
  CUpti_SassMetrics_GetMetrics_Params gm = {CUpti_SassMetrics_GetMetrics_Params_STRUCT_SIZE};
  gm.pChipName = cn.pChipName;
  gm.numOfMetrics = nm.numOfMetrics;
  gm.pMetricsList = md.data();
  CK(cuptiSassMetricsGetMetrics(&gm));
  printf("== %zu SASS metrics\n", md.size());
  for (auto& m : md) printf("sass metric %s: %s\n", m.pMetricName, m.pMetricDescription);
  sass_twice(s.ctx, cn.pChipName);
  CUpti_Profiler_DeInitialize_Params dp = {CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
  CK(cuptiProfilerDeInitialize(&dp));
  printf("== SASS metrics configured again, after the profiler's deinitialization\n");
  CK(cuptiProfilerInitialize(&ip));
  sass_twice(s.ctx, cn.pChipName);
  CK(cuptiProfilerDeInitialize(&dp));

  CUpti_PCSamplingDisableParams pd = {CUpti_PCSamplingDisableParamsSize};
  pd.ctx = s.ctx;
  if (!early) {
    pc_enable(s);
    pc_sample(s);
  }
  printf("== a second range\n");
  pc_sample(s);
  CK(cuptiPCSamplingDisable(&pd));
  printf("== enabled again\n");
  pc_enable(s);
  pc_sample(s);
  CK(cuptiPCSamplingDisable(&pd));
  printf("probe done\n");
  return 0;
}
