// `gpulab source`: a kernel's source with its hot lines marked and their counters beside them,
// the other lines folded; with `sass`, each shown line's instructions under it. Code without line
// information is shown by instruction, with the hint to build it with -lineinfo.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "reports/render/style.hpp"
#include "reports/source_model.hpp"

namespace gpulab::report {

struct SourceViewOptions {
  bool sass = false;          // interleave each shown line's SASS
  std::size_t width = 100;    // columns every line fits in
  std::size_t hot_lines = 3;  // lines marked hot
  int context = 1;            // lines shown around each hot line
};

// A file's text by the name the line table gives it; nullopt when it cannot be found.
using SourceText = std::function<std::optional<std::string>(const std::string& file)>;

// `title` heads the view (the kernel's name).
std::string render_source(const std::string& title, const KernelSource& source,
                          const SourceViewOptions& options, const SourceText& text_of,
                          const Style& style);

}  // namespace gpulab::report
