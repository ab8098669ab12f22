#include "cupti/activity_records.hpp"

#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "cupti/cupti_check.hpp"

namespace gpulab::cupti {
namespace {

using report::Activity;
using report::ActivityKind;

constexpr std::size_t kBufferBytes = std::size_t{8} << 20;

std::mutex g_sink_mutex;
std::function<void(Collected&&)> g_sink;

const char* copy_direction(unsigned kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "PtoP";
    default:
      return "copy";  // array copies, and kinds newer than this code
  }
}

const char* memory_kind(unsigned kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
      return "pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return "pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return "device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return "array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return "managed";
    default:
      return "unknown";
  }
}

// USER is a prefetch the program asked for (cudaMemPrefetchAsync). COHERENCE is the driver
// serving a page fault. The driver's own PREFETCH moves pages next to a faulting one before they
// are touched: it happens only because something faulted, so it is part of the cost of
// on-demand paging, not a transfer the program requested, and is counted as on-demand too.
const char* migration_cause(std::uint32_t flags) {
  switch (flags) {
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_USER:
      return "prefetch";
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE:
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_PREFETCH:
      return "on-demand";
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_EVICTION:
      return "eviction";
    default:
      return "other";  // access-counter migrations, unknown causes
  }
}

// Concurrent-kernel records can arrive without timestamps when the device ran out of memory
// for them; such a record says nothing about when the GPU was busy. Returns the new activity,
// or nullptr when the record was not kept.
report::TraceRecord* add_interval(Collected& out, ActivityKind kind, std::string name,
                                  std::uint32_t stream, std::uint64_t start, std::uint64_t end,
                                  std::uint64_t bytes = 0) {
  if (start == 0 || end < start) {
    ++out.counts.lost;
    return nullptr;
  }
  report::TraceRecord& r = out.records.emplace_back();
  r.activity.kind = kind;
  r.activity.name = std::move(name);
  r.activity.stream = stream;
  r.activity.bytes = bytes;
  r.start = start;
  r.end = end;
  return &r;
}

void collect_unified_memory(const CUpti_ActivityUnifiedMemoryCounter3& u, Collected& out) {
  switch (u.counterKind) {
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH: {
      const bool htod =
          u.counterKind == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD;
      // Migrations belong to no stream: the record's streamId is documented as invalid.
      if (auto* r = add_interval(out, ActivityKind::migration, htod ? "HtoD" : "DtoH", 0, u.start,
                                 u.end, u.value))
        r->activity.cause = migration_cause(u.flags);
      break;
    }
    // One record per fault: `value` is the faulting instruction's address, not a count.
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT:
      ++out.counts.cpu_page_faults;
      break;
    // One record per faulting page the driver serviced; `value` is how many fault groups hit
    // that page, which would count the same page several times.
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT:
      ++out.counts.gpu_page_faults;
      break;
    default:
      break;
  }
}

void collect(const CUpti_Activity& record, Collected& out) {
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto& k = reinterpret_cast<const CUpti_ActivityKernel10&>(record);
      // The name belongs to CUPTI; demangling waits until the trace is assembled.
      if (auto* r = add_interval(out, ActivityKind::kernel, k.name ? k.name : "(unnamed)",
                                 k.streamId, k.start, k.end)) {
        r->correlation_id = k.correlationId;
        r->activity.device = k.deviceId;
        r->registers_per_thread = k.registersPerThread;
        r->static_shared_bytes = k.staticSharedMemory;
        r->local_bytes_per_thread = k.localMemoryPerThread;
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& c = reinterpret_cast<const CUpti_ActivityMemcpy6&>(record);
      if (auto* r = add_interval(out, ActivityKind::copy, copy_direction(c.copyKind), c.streamId,
                                 c.start, c.end, c.bytes)) {
        r->activity.device = c.deviceId;
        r->activity.source_memory = memory_kind(c.srcKind);
        r->activity.destination_memory = memory_kind(c.dstKind);
        r->correlation_id = c.correlationId;
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemset4&>(record);
      if (auto* r = add_interval(out, ActivityKind::memset, "memset", m.streamId, m.start, m.end,
                                 m.bytes)) {
        r->activity.destination_memory = memory_kind(m.memoryKind);
        r->activity.device = m.deviceId;
        r->correlation_id = m.correlationId;
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
      collect_unified_memory(reinterpret_cast<const CUpti_ActivityUnifiedMemoryCounter3&>(record),
                             out);
      break;
    default:
      break;
  }
}

void CUPTIAPI request_buffer(uint8_t** buffer, size_t* size, size_t* max_records) {
  // Without a buffer CUPTI drops the records and counts them, which the trace reports.
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

// Runs on a CUPTI thread, or inside cuptiActivityFlushAll: nothing may throw out of it.
void CUPTIAPI complete_buffer(CUcontext context, uint32_t stream, uint8_t* buffer, size_t,
                              size_t valid) {
  Collected got;
  CUpti_Activity* record = nullptr;
  while (buffer != nullptr) {
    const CUptiResult r = cuptiActivityGetNextRecord(buffer, valid, &record);
    if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
    if (r != CUPTI_SUCCESS) {
      got.counts.unreadable = true;
      break;
    }
    collect(*record, got);
  }
  std::free(buffer);
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS)
    got.counts.lost += dropped;
  std::lock_guard<std::mutex> lock(g_sink_mutex);
  if (g_sink) g_sink(std::move(got));
}

}  // namespace

void Collected::append(Collected&& other) {
  records.insert(records.end(), std::make_move_iterator(other.records.begin()),
                 std::make_move_iterator(other.records.end()));
  counts += other.counts;
}

void deliver_activities_to(std::function<void(Collected&&)> sink) {
  static std::once_flag registered;
  std::call_once(registered, [] {
    GPULAB_CUPTI_CHECK(cuptiActivityRegisterCallbacks(request_buffer, complete_buffer));
  });
  std::lock_guard<std::mutex> lock(g_sink_mutex);
  g_sink = std::move(sink);
}

CUptiResult configure_unified_memory() {
  static std::mutex mutex;
  static std::optional<CUptiResult> settled;
  std::lock_guard<std::mutex> lock(mutex);
  if (settled) return *settled;
  const CUpti_ActivityUnifiedMemoryCounterKind kinds[] = {
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT};
  CUpti_ActivityUnifiedMemoryCounterConfig config[std::size(kinds)] = {};
  for (std::size_t i = 0; i < std::size(kinds); ++i) {
    config[i].scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE;
    config[i].kind = kinds[i];
    config[i].deviceId = 0;
    config[i].enable = 1;
  }
  const CUptiResult r = cuptiActivityConfigureUnifiedMemoryCounter(config, std::size(kinds));
  switch (r) {
    case CUPTI_SUCCESS:
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED:
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE:
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_NON_P2P_DEVICES:
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS:
      settled = r;
      break;
    default:
      break;
  }
  return r;
}

EnabledKinds::~EnabledKinds() {
  if (!flushed_ && !kinds_.empty())
    GPULAB_CUPTI_CHECK_NOEXCEPT(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  for (auto it = kinds_.rbegin(); it != kinds_.rend(); ++it)
    GPULAB_CUPTI_CHECK_NOEXCEPT(cuptiActivityDisable(*it));
}

void EnabledKinds::enable(CUpti_ActivityKind kind) {
  GPULAB_CUPTI_CHECK(cuptiActivityEnable(kind));
  kinds_.push_back(kind);
}

CUptiResult EnabledKinds::try_enable(CUpti_ActivityKind kind) {
  const CUptiResult r = cuptiActivityEnable(kind);
  if (r == CUPTI_SUCCESS) kinds_.push_back(kind);
  return r;
}

void EnabledKinds::flush() {
  flushed_ = true;
  GPULAB_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
}

}  // namespace gpulab::cupti
