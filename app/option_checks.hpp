// The checks every option value passes before a command sees it, built on the readers of
// reports/base/user_input.hpp so that the command line and the commands agree on what a value is.
//
// The grammar of the whole command line (README "Usage"): an option that takes a value takes
// the next word, or the text after '=' (`--json=out.json`). A value is never empty, and never
// looks like an option: a word that starts with '-' and is not a number is an option, so
// `--json --cold` is refused instead of writing a file named "--cold" (name such a file
// `./-file`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/output_format.hpp"

namespace gpulab::app {

// One of `choices`. Completion offers the same choices (choices_of), so it never offers a
// value the option refuses.
CLI::Validator one_of(const std::vector<std::string>& choices);

// An option whose value is one of a closed set (an enum with a to_string): checked as text first
// (one_of: the message and the completion), then read into `target` (the enum, or an optional of
// it for an option whose absence means something).
template <typename Enum, typename Target>
CLI::Option* add_choice_option(CLI::App& cmd, const std::string& name, Target& target,
                               const std::vector<Enum>& choices, const std::string& description) {
  std::vector<std::string> names;
  for (Enum e : choices) names.push_back(to_string(e));
  return cmd
      .add_option_function<std::string>(
          name,
          [&target, choices](const std::string& text) {
            for (Enum e : choices)
              if (text == to_string(e)) target = e;
          },
          description)
      ->check(one_of(names));
}

// --format,-f on `cmd`: what a command prints on stdout, one of `choices`; its --help names
// them and shows the default.
CLI::Option* add_format_option(CLI::App& cmd, OutputFormat& format,
                               const std::vector<OutputFormat>& choices = kEveryFormat);

// The choices of an option checked with one_of; empty for other options.
std::vector<std::string> choices_of(CLI::Option& option);

// A whole integer in [min, max].
CLI::Validator integer_in(std::int64_t min, std::int64_t max);

// A finite number in [min, max].
CLI::Validator number_in(double min, double max);

// Puts the value grammar above on every option of `app` and its subcommands that takes a
// value.
void apply_value_grammar(CLI::App& app);

// Whether an option takes a value: CLI11 gives a flag a type size too, so the number of values it
// expects tells a flag from an option.
inline bool takes_value(const CLI::Option& option) { return option.get_items_expected_min() > 0; }

// Throws UsageError for the first of `options` (long names, e.g. "--size") given on `cmd`:
// "<context>: --size does not apply (<why>)".
void refuse_given(const CLI::App& cmd, const std::vector<std::string>& options,
                  const std::string& context, const std::string& why);

}  // namespace gpulab::app
