#include "cupti/activity_tracer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <cupti_activity.h>
#include <fmt/format.h>

#include "cupti/cupti_check.hpp"
#include "reports/kernel_name.hpp"

namespace gpulab::cupti {
namespace {

using report::Activity;
using report::ActivityKind;

constexpr std::size_t kBufferBytes = std::size_t{8} << 20;
// The driver reports a migration as many small records (a few pages each); back-to-back ones
// are one transfer as far as the timeline is concerned.
constexpr std::uint64_t kMergeGapNs = 5000;

// An activity with CUPTI's absolute nanosecond timestamps: times relative to the first activity
// are known only once every record is in, and a double cannot hold an absolute ns timestamp.
struct Record {
  Activity activity;
  std::uint64_t start = 0;
  std::uint64_t end = 0;
};

// What the buffer callbacks delivered: intervals, and the events that are only counted.
struct Collected {
  std::vector<Record> records;
  std::uint64_t cpu_page_faults = 0;
  std::uint64_t gpu_page_faults = 0;
  std::uint64_t lost = 0;   // dropped by CUPTI, or delivered without timestamps
  bool unreadable = false;  // a buffer held a record CUPTI could not decode

  void append(Collected&& other) {
    records.insert(records.end(), std::make_move_iterator(other.records.begin()),
                   std::make_move_iterator(other.records.end()));
    cpu_page_faults += other.cpu_page_faults;
    gpu_page_faults += other.gpu_page_faults;
    lost += other.lost;
    unreadable = unreadable || other.unreadable;
  }
};

// CUPTI's buffer callbacks are process-wide and cannot be unregistered: they deliver into the
// one live tracer, or drop the records when there is none.
std::mutex g_mutex;
Collected* g_active = nullptr;
bool g_callbacks_registered = false;

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
Activity* add_interval(Collected& out, ActivityKind kind, std::string name, std::uint32_t stream,
                       std::uint64_t start, std::uint64_t end, std::uint64_t bytes = 0) {
  if (start == 0 || end < start) {
    ++out.lost;
    return nullptr;
  }
  Record& r = out.records.emplace_back();
  r.activity.kind = kind;
  r.activity.name = std::move(name);
  r.activity.stream = stream;
  r.activity.bytes = bytes;
  r.start = start;
  r.end = end;
  return &r.activity;
}

void collect_unified_memory(const CUpti_ActivityUnifiedMemoryCounter3& u, Collected& out) {
  switch (u.counterKind) {
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH: {
      const bool htod =
          u.counterKind == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD;
      // Migrations belong to no stream: the record's streamId is documented as invalid.
      if (Activity* a = add_interval(out, ActivityKind::migration, htod ? "HtoD" : "DtoH", 0,
                                     u.start, u.end, u.value))
        a->cause = migration_cause(u.flags);
      break;
    }
    // One record per fault: `value` is the faulting instruction's address, not a count.
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT:
      ++out.cpu_page_faults;
      break;
    // One record per faulting page the driver serviced; `value` is how many fault groups hit
    // that page, which would count the same page several times.
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT:
      ++out.gpu_page_faults;
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
      add_interval(out, ActivityKind::kernel, k.name ? k.name : "(unnamed)", k.streamId, k.start,
                   k.end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& c = reinterpret_cast<const CUpti_ActivityMemcpy6&>(record);
      if (Activity* a = add_interval(out, ActivityKind::copy, copy_direction(c.copyKind),
                                     c.streamId, c.start, c.end, c.bytes)) {
        a->source_memory = memory_kind(c.srcKind);
        a->destination_memory = memory_kind(c.dstKind);
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& m = reinterpret_cast<const CUpti_ActivityMemset4&>(record);
      if (Activity* a = add_interval(out, ActivityKind::memset, "memset", m.streamId, m.start,
                                     m.end, m.bytes))
        a->destination_memory = memory_kind(m.memoryKind);
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
      got.unreadable = true;
      break;
    }
    collect(*record, got);
  }
  std::free(buffer);
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS)
    got.lost += dropped;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_active != nullptr) g_active->append(std::move(got));
}

// The configuration is process-wide. Success and "this platform has no unified-memory
// profiling" are final; any other failure is reported but tried again on the next trace.
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

// Enabled kinds are disabled on every way out of a trace. When the work threw, the records
// are still flushed first, so that none of them is delivered into a later trace.
class EnabledKinds {
 public:
  EnabledKinds() = default;
  EnabledKinds(const EnabledKinds&) = delete;
  EnabledKinds& operator=(const EnabledKinds&) = delete;
  ~EnabledKinds() {
    if (!flushed_ && !kinds_.empty())
      GPULAB_CUPTI_CHECK_NOEXCEPT(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    for (auto it = kinds_.rbegin(); it != kinds_.rend(); ++it)
      GPULAB_CUPTI_CHECK_NOEXCEPT(cuptiActivityDisable(*it));
  }
  void enable(CUpti_ActivityKind kind) {
    GPULAB_CUPTI_CHECK(cuptiActivityEnable(kind));
    kinds_.push_back(kind);
  }
  // Before the kinds are disabled: unified-memory records still incomplete at that moment
  // would be dropped.
  void flush() {
    flushed_ = true;
    GPULAB_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  }

 private:
  std::vector<CUpti_ActivityKind> kinds_;
  bool flushed_ = false;
};

// `records` sorted by start. Another activity in between does not stop two migrations from
// merging: only the gap between them counts.
std::vector<Record> merge_migrations(std::vector<Record> records) {
  std::vector<Record> out;
  std::map<std::pair<std::string, std::string>, std::size_t> open;  // (name, cause) -> index
  for (Record& r : records) {
    if (r.activity.kind == ActivityKind::migration) {
      const auto key = std::make_pair(r.activity.name, r.activity.cause);
      const auto it = open.find(key);
      if (it != open.end() && r.start <= out[it->second].end + kMergeGapNs) {
        Record& m = out[it->second];
        m.end = std::max(m.end, r.end);
        m.activity.bytes += r.activity.bytes;
        m.activity.records += r.activity.records;
        continue;
      }
      open[key] = out.size();
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<Activity> assemble(std::vector<Record> records, std::uint64_t since) {
  records.erase(std::remove_if(records.begin(), records.end(),
                               [&](const Record& r) { return r.start < since; }),
                records.end());
  std::stable_sort(records.begin(), records.end(), [](const Record& a, const Record& b) {
    if (a.start != b.start) return a.start < b.start;
    return a.activity.kind < b.activity.kind;
  });
  records = merge_migrations(std::move(records));
  std::map<std::string, std::string> names;  // a kernel launched often is demangled once
  std::vector<Activity> out;
  out.reserve(records.size());
  const std::uint64_t origin = records.empty() ? 0 : records.front().start;
  for (Record& r : records) {
    if (r.activity.kind == ActivityKind::kernel) {
      auto [it, fresh] = names.try_emplace(r.activity.name);
      if (fresh) it->second = report::display_name(report::demangle(r.activity.name));
      r.activity.name = it->second;
    }
    r.activity.start = static_cast<double>(r.start - origin) * 1e-9;
    r.activity.end = static_cast<double>(r.end - origin) * 1e-9;
    out.push_back(std::move(r.activity));
  }
  return out;
}

void add_note(std::string& note, const std::string& text) {
  if (!note.empty()) note += "; ";
  note += text;
}

}  // namespace

struct ActivityTracer::State {
  Collected collected;
};

ActivityTracer::ActivityTracer() : state_(std::make_unique<State>()) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_active != nullptr)
    throw Error(ExitCode::internal,
                "an activity tracer is already active: CUPTI delivers records to one per process");
  if (!g_callbacks_registered) {
    GPULAB_CUPTI_CHECK(cuptiActivityRegisterCallbacks(request_buffer, complete_buffer));
    g_callbacks_registered = true;
  }
  g_active = &state_->collected;
  // Managed memory allocated before the unified-memory counters were first configured and
  // enabled produced no migration records on the H200 (a lab allocates at setup, before its
  // first trace): set them up now, once, with nothing to record.
  if (configure_unified_memory() == CUPTI_SUCCESS) {
    EnabledKinds kinds;
    kinds.enable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  }
}

ActivityTracer::~ActivityTracer() {
  // Returns the buffers CUPTI still holds (and so frees them) while they can be delivered here.
  GPULAB_CUPTI_CHECK_NOEXCEPT(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  std::lock_guard<std::mutex> lock(g_mutex);
  g_active = nullptr;
}

report::Timeline ActivityTracer::trace(const std::function<void()>& work,
                                       const std::function<void()>& warmup) {
  report::Timeline timeline;
  timeline.kernel_records = "concurrent";
  auto& um = timeline.unified_memory;
  const CUptiResult configured = configure_unified_memory();
  um.available = configured == CUPTI_SUCCESS;
  if (!um.available)
    um.note = fmt::format("unified-memory counters unavailable (CUPTI error {}: {})",
                          static_cast<int>(configured), describe(configured));

  {
    std::lock_guard<std::mutex> lock(g_mutex);
    state_->collected = Collected{};  // what a failed earlier trace left
  }
  std::uint64_t since = 0;  // activities that began earlier belong to the warm-up
  {
    EnabledKinds kinds;
    kinds.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    kinds.enable(CUPTI_ACTIVITY_KIND_MEMCPY);
    kinds.enable(CUPTI_ACTIVITY_KIND_MEMSET);
    if (um.available) kinds.enable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
    if (warmup) {
      warmup();
      GPULAB_CUPTI_CHECK(cuptiGetTimestamp(&since));
    }
    const auto begin = std::chrono::steady_clock::now();
    work();
    timeline.trace_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    kinds.flush();
  }

  Collected got;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    got = std::exchange(state_->collected, Collected{});
  }
  timeline.activities = assemble(std::move(got.records), since);

  um.cpu_page_faults = got.cpu_page_faults;
  if (got.gpu_page_faults > 0) {
    um.gpu_page_faults = got.gpu_page_faults;
  } else if (std::any_of(timeline.activities.begin(), timeline.activities.end(),
                         [](const Activity& a) { return a.cause == "on-demand"; })) {
    add_note(um.note, "the driver delivered no GPU page-fault records");
  }
  if (got.lost > 0)
    add_note(um.note, fmt::format("{} activity records dropped or without timestamps", got.lost));
  if (got.unreadable)
    add_note(um.note, "an activity buffer held a record CUPTI could not read; the rest was lost");
  return timeline;
}

}  // namespace gpulab::cupti
