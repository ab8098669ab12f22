// How text output looks: plain tables or Markdown tables, with or without ANSI colors. Colors
// are decided by the caller (a terminal, and NO_COLOR unset); data never carries them.
#pragma once

#include <string>

namespace gpulab::report {

enum class TableStyle { text, markdown };

struct Style {
  TableStyle table = TableStyle::text;
  bool color = false;
  // Findings shown per diagnosis, principal first; 0 shows them all (--all-findings). Reports
  // (JSON) keep every finding.
  int max_findings = 3;
};

enum class Tone { good, bad, warn, strong };

// `text` wrapped in the tone's ANSI color when style.color, unchanged otherwise.
std::string paint(const std::string& text, Tone tone, const Style& style);

}  // namespace gpulab::report
