#include "app/output_format.hpp"

namespace gpulab::app {

const char* to_string(OutputFormat format) {
  switch (format) {
    case OutputFormat::json:
      return "json";
    case OutputFormat::markdown:
      return "markdown";
    case OutputFormat::csv:
      return "csv";
    case OutputFormat::text:
      break;
  }
  return "text";
}

std::optional<OutputFormat> output_format_from_string(const std::string& text) {
  for (OutputFormat f : kEveryFormat)
    if (text == to_string(f)) return f;
  return std::nullopt;
}

}  // namespace gpulab::app
