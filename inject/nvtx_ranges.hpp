// The NVTX ranges open in a profiled process, kept from CUPTI's NVTX callbacks
// (CUPTI_CB_DOMAIN_NVTX): each thread's push/pop stack per domain, the process's open start/end
// ranges, the names of domains and registered strings. A launch asks what is open around it:
// for --nvtx-include/--nvtx-exclude (reports/nvtx_filter.hpp) and for its record's range path.
//
// NVTX calls reach CUPTI only when the NVTX library finds an injection (NVTX_INJECTION64_PATH):
// `gpulab profile` names this library, whose InitializeInjectionNvtx2 hands NVTX to CUPTI's.
//
// Bounded whatever the program does: a stack keeps its first kMaxDepth ranges (deeper pushes are
// counted, so that pops stay paired), at most kMaxStarted start/end ranges are open at once, and a
// name keeps its first kMaxNameBytes bytes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <cupti.h>

#include "reports/nvtx_filter.hpp"
#include "reports/profile_records.hpp"

namespace gpulab::inject {

class NvtxRanges {
 public:
  static constexpr std::size_t kMaxDepth = 128;
  static constexpr std::size_t kMaxStarted = 4096;
  static constexpr std::size_t kMaxNameBytes = 1024;

  // One NVTX call, as CUPTI delivers it.
  void on_call(CUpti_CallbackId id, const CUpti_NvtxData& data);

  // What is open around a launch on the calling thread.
  report::NvtxOpen open_now() const;
  // The same as one path, outermost first: the thread's pushed ranges and the process's started
  // ones, in the order they were opened; a range of a domain other than the default is written
  // "domain@name" (the filter's notation).
  std::vector<std::string> path_now() const;
  // Whether the program has made any NVTX call that opens a range.
  bool seen() const { return seen_; }

  // Traced programs: each range, as it closes, goes to `sink` with its times by `now` (the
  // activity records' clock); its pid is left 0. Set before the first call.
  using Clock = std::function<std::uint64_t()>;
  using Closed = std::function<void(report::RecordedRange&&)>;
  void on_close(Clock now, Closed sink);

  // A forked child keeps its thread's stack (fork copies the calling thread) and drops the rest.
  void after_fork_in_child();

  struct Open {
    std::string domain;
    std::string name;
    std::uint64_t order = 0;     // when it was opened, for the path
    std::uint64_t start_ns = 0;  // by the clock of on_close; 0 without one
  };

 private:
  // The open ranges of the calling thread and of the process, in the order they were opened.
  std::vector<Open> open_ranges() const;
  static std::vector<std::string> path_of(const std::vector<Open>& ranges);
  std::uint64_t now() const;

  std::string domain_name(const void* handle) const;
  std::string message(const void* attributes) const;  // of an nvtxEventAttributes_t
  void push(const void* domain, std::string name);
  void pop(const void* domain);
  void start(const void* domain, std::string name, std::uint64_t id);
  void end(std::uint64_t id);

  mutable std::mutex mutex_;  // guards what follows (each thread's stacks are its own)
  std::map<const void*, std::string> domains_;
  std::map<const void*, std::string> strings_;  // registered strings
  std::map<std::uint64_t, Open> started_;       // by range id
  std::atomic<bool> seen_{false};
  Clock now_;
  Closed closed_;
};

}  // namespace gpulab::inject
