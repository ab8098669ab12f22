// What the activity API delivers: kernel durations (of launches recorded one by one; the others
// are tallied), and in trace mode every activity of the timeline.
#include "inject/injection.hpp"

#include <cstdio>
#include <mutex>

#include "cupti/cupti_check.hpp"

namespace gpulab::inject {

// The unified-memory records CUPTI would not enable before a context existed: once, at the first
// context. A second refusal leaves the trace without migrations, and the process says why.
void Injection::unified_memory_records_late() {
  static std::once_flag once;
  std::call_once(once, [this] {
    cuptiEnableCallback(0, subscriber_, CUPTI_CB_DOMAIN_RESOURCE,
                        CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
    const CUptiResult r = kinds_->try_enable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
    if (r != CUPTI_SUCCESS)
      std::fprintf(stderr, "gpulab: no unified-memory migration records in this trace: %s\n",
                   cupti::describe(r));
  });
}

void Injection::on_activities(cupti::Collected&& got) {
  const std::int64_t pid = ::getpid();
  std::string lines;
  for (const auto& t : got.records) {
    if (t.activity.kind == report::ActivityKind::kernel &&
        tally_.kernel_time(t.correlation_id, t.activity.name,
                           t.end > t.start ? static_cast<double>(t.end - t.start) * 1e-9 : 0))
      lines += report::to_line(report::RecordedKernelTime{
          pid, t.correlation_id, t.start, t.end, t.activity.stream, t.registers_per_thread,
          t.static_shared_bytes, t.local_bytes_per_thread});
    if (tracing()) lines += report::to_line(pid, t);
  }
  if (tracing()) lines += report::to_line(pid, got.counts);
  if (!lines.empty()) file_.write(lines);
  write_tally_when_due();
}

void Injection::write_tally_when_due() {
  if (!tally_.due()) return;
  if (const std::string lines = tally_.take_lines(::getpid()); !lines.empty()) file_.write(lines);
}

}  // namespace gpulab::inject
