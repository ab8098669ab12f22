// Input files read whole, within a bound: a report, a page of docs. Every input is untrusted,
// and a wrong path (/dev/zero, an endless pipe) must fail in a moment, not exhaust memory.
#pragma once

#include <cstddef>
#include <string>

namespace gpulab {

// The most read_file reads by default: far above any report (a traced lab's is well under
// 1 MiB), low enough that a wrong path fails at once. Documented in docs/report-schema.md.
inline constexpr std::size_t kMaxInputBytes = std::size_t{64} << 20;

// Reads a whole file of at most `max_bytes` ("-": standard input); throws UsageError naming the
// path when it cannot or when there is more (a pipe or a device is read only that far).
std::string read_file(const std::string& path, std::size_t max_bytes = kMaxInputBytes);

}  // namespace gpulab
