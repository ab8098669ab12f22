// Files written whole or not at all: write a temporary file beside the target, flush it to
// disk, then rename it over the target (rename is atomic within one file system).
#pragma once

#include <cstddef>
#include <string>

namespace gpulab {

// Throws UsageError naming the path when the file could not be written; never leaves a
// partial file behind. A symbolic link is written through: its target gets the new content
// and the link stays.
void write_file_atomically(const std::string& path, const std::string& content);

// Throws UsageError when `path` cannot be written later (missing or read-only folder, a
// folder in the way). Lets a command fail before it spends minutes on the GPU.
void check_writable(const std::string& path);

// The most read_file reads by default: far above any report (a traced lab's is well under
// 1 MiB), low enough that a wrong path (/dev/zero, an endless pipe) fails in a moment instead
// of exhausting memory. Documented in docs/report-schema.md.
inline constexpr std::size_t kMaxInputBytes = std::size_t{64} << 20;

// Reads a whole file of at most `max_bytes`; throws UsageError naming the path when it cannot
// or when there is more (a pipe or a device is read only that far).
std::string read_file(const std::string& path, std::size_t max_bytes = kMaxInputBytes);

}  // namespace gpulab
