// Input files read whole, within a bound: a report, a page of docs. Every input is untrusted,
// and a wrong path (/dev/zero, an endless pipe) must fail in a moment, not exhaust memory.
#pragma once

#include <cstddef>
#include <string>

namespace gpulab {

// The most read_file reads by default: a report of 100,000 profiled launches with the `full`
// metric set takes about 110 MB (docs/report-schema.md, "At the scale of jobs"), and gpulab
// refuses to write a report past what it reads back (save_report). Low enough that a wrong path
// (an endless pipe) fails in a bounded time and memory.
inline constexpr std::size_t kMaxInputBytes = std::size_t{1} << 30;

// Reads a whole file of at most `max_bytes` ("-": standard input); throws UsageError naming the
// path when it cannot, when there is more (a pipe is read only that far), or when the path is a
// directory or a device (/dev/zero never ends; standard input may be a terminal).
std::string read_file(const std::string& path, std::size_t max_bytes = kMaxInputBytes);

// The most of a JSON input gpulab parses, beyond its bytes: what a parser's memory grows with.
// A report nests about eight levels; a job's report holds about 70 values per profiled launch
// with the `full` set, nearly all in arrays (a function's columns), so 32 million values take a
// job of some 450,000 profiled launches; the longest strings are source files embedded with
// --embed-source. Within these, parsing a hostile input takes at most about 1 GB beside its
// text: values of 16 bytes, and the object members among them (a map node and a key each, about
// 100 bytes) at most 4 million. Documented in docs/report-schema.md.
struct JsonLimits {
  int depth = 64;
  std::size_t values = 32'000'000;                   // array elements and object members
  std::size_t members = 4'000'000;                   // object members
  std::size_t string_bytes = std::size_t{16} << 20;  // one string's, unescaped or not
};

// Throws UsageError naming `what` when `text` exceeds a limit: one pass over the text, before any
// parser allocates for it (brackets, commas and colons inside strings do not count).
void check_json_shape(const std::string& text, const std::string& what,
                      const JsonLimits& limits = {});

}  // namespace gpulab
