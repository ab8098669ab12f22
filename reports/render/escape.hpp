// Report-borne strings (lab, variant and kernel names, messages, notes, file labels) come from
// files anyone can write. Before such a string reaches a terminal or a Markdown page it goes
// through shown(), before it reaches the HTML report through html_safe(): a name must not be able
// to recolor the terminal, set its title, move the cursor, fake an output line or inject HTML into
// a rendered page.
#pragma once

#include <string>
#include <string_view>

#include "reports/render/style.hpp"

namespace gpulab::report {

// Control characters as visible escapes: C0 (including tab and newline) and DEL as \xNN,
// C1 (U+0080..U+009F) and the bidirectional overrides (U+202A..U+202E, U+2066..U+2069) as
// \uNNNN, bytes that are not UTF-8 as \xNN. Everything else is kept.
std::string terminal_safe(std::string_view text);

// terminal_safe, then the characters Markdown or HTML would read as markup: & < > as entities,
// \ ` * _ ~ [ ] # as backslash escapes. `|` is left to the table renderer, which escapes it in
// cells (outside a table it is plain text).
std::string markdown_safe(std::string_view text);

// terminal_safe, then the characters HTML reads as markup as entities (& < > " '): safe in
// element content and in quoted attribute values (the HTML report, its SVG charts).
std::string html_safe(std::string_view text);

// The one call renderers make: markdown_safe for Markdown output, terminal_safe otherwise.
std::string shown(std::string_view text, const Style& style);

// A fenced Markdown code block around `text` (already terminal_safe), with a fence longer than
// any run of backticks inside, so the text cannot close it.
std::string markdown_code_block(std::string_view text);

}  // namespace gpulab::report
