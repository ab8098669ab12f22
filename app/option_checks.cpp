#include "app/option_checks.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "reports/base/errors.hpp"
#include "reports/base/user_input.hpp"

namespace gpulab::app {
namespace {

// The message of a UsageError from the readers, for CLI11, which puts the option's name first.
template <typename Check>
std::string failure_of(Check&& check) {
  try {
    check();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

bool looks_like_option(const std::string& value) {
  if (value.size() < 2 || value[0] != '-') return false;
  return failure_of([&] { parse_number("", value); }) != "";  // -5 and -0.5 are values
}

const char* const kOneOf = "one of";

// What --help shows after the type: the range, without the ends that are the type's own.
std::string integer_range_text(std::int64_t min, std::int64_t max) {
  constexpr auto lowest = std::numeric_limits<std::int64_t>::min();
  constexpr auto highest = std::numeric_limits<std::int64_t>::max();
  if (min == lowest && max == highest) return "";
  if (max == highest) return fmt::format("INT >= {}", min);
  return fmt::format("INT in [{} - {}]", min, max);
}

}  // namespace

// The choices travel in the validator's description ("{text,json,csv}", as --help shows
// them), where choices_of reads them back.
CLI::Validator one_of(const std::vector<std::string>& choices) {
  std::string description;
  for (const auto& c : choices) description += (description.empty() ? "" : ",") + c;
  description = "{" + description + "}";
  return CLI::Validator(
      [choices, description](std::string& value) {
        if (std::find(choices.begin(), choices.end(), value) != choices.end()) return std::string();
        return fmt::format("'{}' is not one of {}", value, description);
      },
      description, kOneOf);
}

CLI::Option* add_format_option(CLI::App& cmd, OutputFormat& format,
                               const std::vector<OutputFormat>& formats) {
  std::string spoken;  // "text, json or csv"
  for (std::size_t i = 0; i < formats.size(); ++i) {
    if (i > 0) spoken += i + 1 == formats.size() ? " or " : ", ";
    spoken += to_string(formats[i]);
  }
  return add_choice_option(cmd, "--format,-f", format, formats, "Output on stdout: " + spoken)
      ->default_str(to_string(format));
}

std::vector<std::string> choices_of(CLI::Option& option) {
  CLI::Validator* v = nullptr;
  try {
    v = option.get_validator(kOneOf);
  } catch (const CLI::OptionNotFound&) {
    return {};
  }
  if (v->get_name() != kOneOf) return {};  // get_validator falls back to the first one
  const std::string d = v->get_description();
  return split_list("", d.substr(1, d.size() - 2));
}

CLI::Validator integer_in(std::int64_t min, std::int64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) {
        std::int64_t v = 0;
        if (auto why = failure_of([&] { v = parse_integer("", text); }); !why.empty()) return why;
        if (v < min || v > max) return fmt::format("{} is out of range (allowed: {} to {})", text, min, max);
        return std::string();
      },
      integer_range_text(min, max));
}

CLI::Validator number_in(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& text) {
        double v = 0;
        if (auto why = failure_of([&] { v = parse_number("", text); }); !why.empty()) return why;
        if (v < min || v > max) return fmt::format("{} is out of range (allowed: {} to {})", text, min, max);
        return std::string();
      },
      fmt::format("NUMBER in [{} - {}]", min, max));
}

void apply_value_grammar(CLI::App& app) {
  const CLI::Validator grammar(
      [](std::string& value) -> std::string {
        if (value.empty()) return "the value is empty";
        if (looks_like_option(value))
          return fmt::format("'{}' is an option, not a value (for a file of that name, write ./{})",
                             value, value);
        return "";
      },
      "");
  for (auto* opt : app.get_options())
    if (opt->nonpositional() && opt->get_type_size() != 0) opt->check(grammar);
  for (auto* sub : app.get_subcommands([](CLI::App*) { return true; }))
    apply_value_grammar(*sub);
}

void refuse_given(const CLI::App& cmd, const std::vector<std::string>& options,
                  const std::string& context, const std::string& why) {
  for (const auto& name : options) {
    const auto* opt = cmd.get_option_no_throw(name);
    if (opt && opt->count() > 0)
      throw UsageError(fmt::format("{}: {} does not apply ({})", context, name, why));
  }
}

}  // namespace gpulab::app
