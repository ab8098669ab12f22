#include "reports/launch_tally.hpp"

#include "reports/profile_records.hpp"

namespace gpulab::report {

bool LaunchTally::record_in_full(const std::string& mangled_name, bool matched, bool profiled,
                                 std::uint32_t correlation_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  Function& f = functions_[mangled_name];
  f.matched = f.matched || matched;  // some launch of it passed
  if (profiled || f.recorded < kFullRecordsPerFunction) {
    ++f.recorded;
    recorded_in_full_.insert(correlation_id);
    return true;
  }
  ++f.counted;
  if (!matched) ++f.unmatched;
  f.changed = true;
  ++since_take_;
  return false;
}

bool LaunchTally::kernel_time(std::uint32_t correlation_id, const std::string& mangled_name,
                              double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Kept, not erased: a replayed launch may bring more than one record, all of them its own.
  if (recorded_in_full_.count(correlation_id) > 0) return true;
  Function& f = functions_[mangled_name];
  ++f.timed;
  f.seconds += seconds;
  f.changed = true;
  ++since_take_;
  return false;
}

bool LaunchTally::due() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return since_take_ >= kTallyEvery;
}

std::string LaunchTally::take_lines(std::int64_t pid) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string lines;
  for (auto& [name, f] : functions_) {
    if (!f.changed) continue;
    lines +=
        to_line(RecordedTally{pid, name, f.matched, f.counted, f.timed, f.seconds, f.unmatched});
    f.changed = false;
  }
  since_take_ = 0;
  return lines;
}

void LaunchTally::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  functions_.clear();
  recorded_in_full_.clear();
  since_take_ = 0;
}

}  // namespace gpulab::report
