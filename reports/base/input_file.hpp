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

// The deepest nesting of arrays and objects a JSON input may have: gpulab's reports nest about
// eight levels, and a parser's memory grows with the depth (a 64 MiB file of '[' takes gigabytes
// to refuse). Documented in docs/report-schema.md beside kMaxInputBytes.
inline constexpr int kMaxJsonDepth = 64;

// Throws UsageError naming `what` when `text` nests arrays and objects deeper than kMaxJsonDepth:
// one pass over the text, before any parser allocates for it (brackets inside strings do not
// count).
void check_json_depth(const std::string& text, const std::string& what);

}  // namespace gpulab
