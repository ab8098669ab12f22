// Which launches of a profiled process are recorded one by one, and what the others add up to.
// A program can launch millions of kernels; a record per launch would grow the record files, and
// gpulab's memory reading them, without bound. A launch is recorded in full (its launch record,
// and its duration as a kernel-time record) when it is profiled, or when it is among the first
// kFullRecordsPerFunction launches of its function: enough durations for the function's timing
// statistics. Every other launch is counted per function, its duration folded into the
// function's total by name, and written as one cumulative tally line per function
// (RecordedTally) every kTallyEvery counted events and when the process ends.
//
// The injection library (inject/injection.cpp) and the CPU tests' stand-in program share it, so
// the stand-in writes records as the injection does. Thread-safe: launches are counted on the
// program's threads, durations arrive on CUPTI's buffer thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace gpulab::report {

inline constexpr std::int64_t kFullRecordsPerFunction = 256;
// A crash loses at most this many counted launches and durations from the tallies.
inline constexpr std::int64_t kTallyEvery = 65536;

class LaunchTally {
 public:
  // Counts one launch; true when it is to be recorded in full. `correlation_id` is CUPTI's, which
  // the launch's kernel-time record carries too.
  bool record_in_full(const std::string& mangled_name, bool matched, bool profiled,
                      std::uint32_t correlation_id);

  // A kernel's duration from its activity record: true when its launch was recorded in full (the
  // caller writes the kernel-time record), false when it was folded into the function's tally.
  bool kernel_time(std::uint32_t correlation_id, const std::string& mangled_name, double seconds);

  // Whether kTallyEvery events were counted since the last take_lines.
  bool due() const;

  // The tally lines of the functions counted since the last call, cumulative; empty when none.
  std::string take_lines(std::int64_t pid);

  // A forked child starts with nothing of its parent's.
  void reset();

 private:
  struct Function {
    std::int64_t recorded = 0;  // launches recorded in full
    std::int64_t counted = 0;   // launches counted only
    std::int64_t timed = 0;     // durations folded
    double seconds = 0;
    std::int64_t unmatched = 0;  // of `counted`: launches outside the selection
    bool matched = false;
    bool changed = false;
  };

  mutable std::mutex mutex_;
  std::unordered_map<std::string, Function> functions_;
  // The correlation ids of the launches recorded in full: as many as their records.
  std::unordered_set<std::uint32_t> recorded_in_full_;
  std::int64_t since_take_ = 0;
};

}  // namespace gpulab::report
