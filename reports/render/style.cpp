#include "reports/render/style.hpp"

namespace gpulab::report {

std::string paint(const std::string& text, Tone tone, const Style& style) {
  if (!style.color || text.empty()) return text;
  const char* code = "";
  switch (tone) {
    case Tone::good:
      code = "\033[32m";
      break;  // green
    case Tone::bad:
      code = "\033[31m";
      break;  // red
    case Tone::warn:
      code = "\033[33m";
      break;  // yellow
    case Tone::strong:
      code = "\033[1m";
      break;  // bold
  }
  return code + text + "\033[0m";
}

}  // namespace gpulab::report
