// The texts of a kernel's source files for its source view: the report's copy where it embedded
// one, else the file the line table names, read from the current folder when relative.
#pragma once

#include "reports/render/render_source.hpp"
#include "reports/source_model.hpp"

namespace gpulab::app {

// Reads files from disk only (the HTML page adds each report's own copies itself).
report::SourceText files_on_disk();
// The report's copies first, then the files on disk. Borrows `source`.
report::SourceText source_text(const report::KernelSource& source);

}  // namespace gpulab::app
