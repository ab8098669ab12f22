// What every gpulab HTML page shares: its style (system fonts, colours that print, the SVG
// charts' classes) and its head and tail. The page's header is left open after page_head
// (`<dl class="meta">`), for the page to add its own lines before closing it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gpulab::report {

// Long C++ names (a library kernel's template arguments run to hundreds of characters) are cut
// in the middle (reports/kernel_name.hpp, shortened), the whole name on hover: a bar's label, in
// the 230 pixels beside its bar, holds this many characters.
inline constexpr std::size_t kBarLabelChars = 26;

// The document up to the header's list of facts: the title, who made the page, the command.
std::string page_head(const std::string& title, const std::string& generator,
                      const std::vector<std::string>& argv);
std::string page_tail();

}  // namespace gpulab::report
