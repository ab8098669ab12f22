// Text from a report made safe for HTML and SVG: the markup characters become entities and
// control characters (a kernel or variant name may hold anything) become visible escapes, so
// that no string from a report can open a tag, end an attribute or drive a terminal.
#pragma once

#include <string>
#include <string_view>

namespace gpulab::report {

// For element content and for attribute values in double or single quotes.
std::string escape_html(std::string_view text);

}  // namespace gpulab::report
