// Files written whole or not at all: write a temporary file beside the target, flush it to
// disk, then rename it over the target (rename is atomic within one file system).
#pragma once

#include <string>

namespace gpulab {

// Throws UsageError naming the path when the file could not be written; never leaves a
// partial file behind. A symbolic link is written through: its target gets the new content
// and the link stays.
void write_file_atomically(const std::string& path, const std::string& content);

// Throws UsageError when `path` cannot be written later (missing or read-only folder, a
// folder in the way). Lets a command fail before it spends minutes on the GPU.
void check_writable(const std::string& path);

}  // namespace gpulab
