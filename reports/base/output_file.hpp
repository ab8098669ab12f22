// Where every output of gpulab goes (--json, -o/--html, --trace, --json-dir, the shell's `save`
// and its history): one function, which does what coreutils and git do with a path.
//
//   "-"                        standard output
//   a regular file, or none    replaced whole or not at all: a temporary file beside it, flushed
//                              to disk, renamed over it (atomic within one file system); a new
//                              file gets 0666 & ~umask, a rewritten one keeps its mode and owner
//   anything else that exists  written in place, never replaced: a device (/dev/null), a FIFO,
//   (devices, FIFOs, sockets,  a terminal, /dev/stdout and /proc/self/fd/N (the descriptor's
//   descriptor links)          open file, after what was written to it before)
//   a folder                   refused
//
// A symbolic link is followed (its target gets the content, the link stays), except one in a
// sticky, world-writable folder (/tmp) owned by neither the caller nor the folder's owner: that
// is refused, as the kernel's fs.protected_symlinks refuses to open it.
// Every message names the path as the user gave it, never a temporary file.
#pragma once

#include <ostream>
#include <string>

namespace gpulab {

// The output path that means standard output (and, for inputs, standard input).
inline constexpr const char* kStandardStream = "-";

// Writes `content` to `path` as above; "-" goes to `standard_output`. Throws UsageError naming
// the path when it cannot ("cannot write 'PATH': no space left on device"); a regular file
// is then left as it was.
void write_output(const std::string& path, const std::string& content,
                  std::ostream& standard_output);

// Throws UsageError when `path` cannot be written later (missing or read-only folder, a folder
// in the way, a refused link). Lets a command fail before it spends minutes on the GPU.
void check_output(const std::string& path);

}  // namespace gpulab
