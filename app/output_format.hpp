// What a command prints on stdout (--format): one closed set, spelled in one place.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpulab::app {

enum class OutputFormat { text, json, markdown, csv };

const char* to_string(OutputFormat format);
std::optional<OutputFormat> output_format_from_string(const std::string& text);

inline const std::vector<OutputFormat> kEveryFormat = {OutputFormat::text, OutputFormat::json,
                                                       OutputFormat::markdown, OutputFormat::csv};

}  // namespace gpulab::app
