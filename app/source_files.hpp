// The texts of a kernel's source files: for its source view, the report's copy where it embedded
// one, else the file the line table names, read from the current folder when relative; and, for
// `run --embed-source`, those files copied into the report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/render/render_source.hpp"
#include "reports/source_model.hpp"

namespace gpulab::app {

// The largest source file a report embeds or a view reads: a line table that names something
// bigger names no source file a person wrote.
inline constexpr std::uintmax_t kMaxSourceBytes = 4u << 20;

// Reads regular files of at most kMaxSourceBytes from disk only (never a FIFO or a device,
// which could block or never end; the HTML page adds each report's own copies itself).
report::SourceText files_on_disk();
// The report's copies first, then the files on disk. Borrows `source`.
report::SourceText source_text(const report::KernelSource& source);

// Copies into `source.files` the text of every file its lines name, call sites of inlined code
// included, that `read` gives; returns those it could not read, each once.
std::vector<std::string> embed_files(report::KernelSource& source,
                                     const report::SourceText& read = files_on_disk());

}  // namespace gpulab::app
