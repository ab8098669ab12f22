// Completion of command lines: one engine for the shell's tab key and for `gpulab complete`,
// which the bash and zsh scripts in scripts/completions call. Commands, options and the
// choices of an option come from the CLI11 definition itself (the choices from the very check
// that validates them, see one_of), labs, variants and parameters from the registry,
// thresholds and metrics from their catalogues.
#include <algorithm>

#include <fmt/format.h>

#include "app/cli.hpp"
#include "app/command_line.hpp"
#include "app/option_checks.hpp"
#include "app/shell.hpp"
#include "labs/harness/registry.hpp"
#include "reports/derived.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/metric_catalogue.hpp"

namespace gpulab::app {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::vector<std::string> lab_names() {
  std::vector<std::string> names;
  for (const auto* lab : labs::all_labs()) names.push_back(lab->spec().name);
  return names;
}

// The first word after the command that is not an option (or an option's value): the lab.
std::string positional_lab(const std::vector<std::string>& words, const CLI::App& sub) {
  for (std::size_t i = 1; i < words.size(); ++i) {
    const auto& w = words[i];
    if (starts_with(w, "-")) {
      const auto* opt = sub.get_option_no_throw(w);
      if (opt && takes_value(*opt)) ++i;  // skip the option's value
      continue;
    }
    return w;
  }
  return "";
}

std::vector<std::string> option_names(const CLI::App& sub) {
  std::vector<std::string> out{"--help"};
  for (const auto* opt : sub.get_options()) {
    for (const auto& l : opt->get_lnames()) out.push_back("--" + l);
    for (const auto& s : opt->get_snames()) out.push_back("-" + s);
  }
  return out;
}

// NAME= for each name: the value of a NAME=VALUE option goes on after the '='.
std::vector<std::string> assignments(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names) out.push_back(n + "=");
  return out;
}

// The values the option takes, from the definitions the command checks them with; nothing
// for a number or a file name.
std::vector<std::string> value_candidates(const std::string& command, CLI::Option& opt,
                                          const std::vector<std::string>& words, const CLI::App& sub) {
  if (auto choices = choices_of(opt); !choices.empty()) return choices;
  const std::string name = opt.get_name();
  const auto* lab = labs::find_lab(positional_lab(words, sub));
  if (name == "--variant") {
    std::vector<std::string> out{"all"};
    if (lab)
      for (const auto& v : lab->spec().variants) out.push_back(v.name);
    return out;
  }
  if (name == "--param") {
    std::vector<std::string> params;
    if (lab)
      for (const auto& p : lab->spec().params) params.push_back(p.name);
    return assignments(params);
  }
  if (name == "--threshold") {
    std::vector<std::string> names;
    for (const auto& t : report::threshold_catalogue()) names.emplace_back(t.name);
    return assignments(names);
  }
  if (name == "--labs") {
    auto out = lab_names();
    out.emplace_back("all");
    return out;
  }
  if (name == "--metrics" && command == "compare") {  // metric names, not sets
    std::vector<std::string> out;
    for (const auto& m : report::metrics::catalogue()) out.emplace_back(m.short_name);
    for (const auto& d : report::derived_catalogue()) out.emplace_back(d.name);
    return out;
  }
  if (name == "--metrics" || name == "--check-metrics") return report::metrics::set_names();
  return {};
}

// The kind of path an option's value is, from its type name ("FILE", "DIR", or either with the
// checks' descriptions after a ':').
PathKind path_kind_of(const CLI::Option& opt) {
  const std::string type = opt.get_type_name();
  const std::string base = type.substr(0, type.find(':'));
  if (base == "FILE") return PathKind::file;
  if (base == "DIR") return PathKind::folder;
  return PathKind::none;
}

CLI::App* find_command(CommandLine& cli, const std::string& name) {
  for (auto* s : cli.app.get_subcommands([](CLI::App*) { return true; }))
    if (s->get_name() == name) return s;
  return nullptr;
}

// After `--` every word is the command's positional (profile: the program and its arguments).
bool after_separator(const std::vector<std::string>& words) {
  return std::find(words.begin() + 1, words.end(), "--") != words.end();
}

std::vector<std::string> candidates(const std::vector<std::string>& words, bool in_shell) {
  CommandLine cli;
  if (words.empty()) {
    std::vector<std::string> out;
    for (const auto* sub : cli.app.get_subcommands([](const CLI::App* s) {
           return !s->get_group().empty();  // hidden commands have no group
         })) {
      if (in_shell && sub->get_name() == "shell") continue;
      out.push_back(sub->get_name());
    }
    if (in_shell)
      for (const auto& b : shell_builtins()) out.push_back(b);
    return out;
  }
  const std::string& command = words.front();
  // `help CMD`, in the shell and on the command line alike.
  if (command == "help")
    return words.size() == 1 ? candidates({}, in_shell) : std::vector<std::string>{};
  if (in_shell && command == "set") return words.size() == 1 ? shell_setting_names() : std::vector<std::string>{};

  CLI::App* sub = find_command(cli, command);
  if (!sub || after_separator(words)) return {};

  const std::string prev = words.size() > 1 ? words.back() : "";
  if (starts_with(prev, "-")) {
    auto* opt = sub->get_option_no_throw(prev);
    if (opt && takes_value(*opt)) return value_candidates(command, *opt, words, *sub);
  }
  std::vector<std::string> out = option_names(*sub);
  if ((command == "run" || command == "diagnose" || command == "sweep") &&
      positional_lab(words, *sub).empty()) {
    const auto labs = lab_names();
    out.insert(out.end(), labs.begin(), labs.end());
  }
  return out;
}

}  // namespace

PathKind path_expected(const std::vector<std::string>& words, const std::string& partial,
                       bool in_shell) {
  if (words.empty()) return PathKind::none;
  const std::string& command = words.front();
  if (in_shell && command == "save") return words.size() == 1 ? PathKind::file : PathKind::none;
  if (in_shell && command == "set")
    return words.size() == 2 && words[1] == "output" ? PathKind::folder : PathKind::none;
  if (in_shell && command == "help") return PathKind::none;
  CommandLine cli;
  CLI::App* sub = find_command(cli, command);
  if (!sub) return PathKind::none;
  // The words of a positional: the reports of compare and report, the program of profile.
  const auto positional = [&] {
    if (command == "profile") return PathKind::file;
    for (const auto* opt : sub->get_options())
      if (!opt->nonpositional()) return path_kind_of(*opt);
    return PathKind::none;
  };
  if (after_separator(words)) return positional();
  const std::string prev = words.size() > 1 ? words.back() : "";
  if (starts_with(prev, "-")) {
    const auto* opt = sub->get_option_no_throw(prev);
    if (opt && takes_value(*opt)) return path_kind_of(*opt);
  }
  return starts_with(partial, "-") ? PathKind::none : positional();  // a '-' begins an option
}

// The options whose value is a comma-separated list of names (split_list).
bool takes_a_list(const std::string& option) {
  return option == "--variant" || option == "-v" || option == "--labs" || option == "--metrics" ||
         option == "-m" || option == "--check-metrics";
}

std::vector<std::string> complete(const std::vector<std::string>& words, const std::string& partial,
                                  bool in_shell) {
  // "--option=VAL": the value after the '=' is completed, each candidate with its option before it.
  if (const auto eq = partial.find('='); starts_with(partial, "--") && eq != std::string::npos) {
    auto with_option = words;
    with_option.push_back(partial.substr(0, eq));
    std::vector<std::string> out;
    for (const auto& c : complete(with_option, partial.substr(eq + 1), in_shell))
      out.push_back(partial.substr(0, eq + 1) + c);
    return out;
  }
  // "tiled,pa" in a list: the item after the last comma, with the items before it kept and not
  // offered again.
  if (const auto comma = partial.rfind(',');
      comma != std::string::npos && words.size() > 1 && takes_a_list(words.back())) {
    const std::string head = partial.substr(0, comma + 1);
    std::vector<std::string> out;
    for (const auto& c : complete(words, partial.substr(comma + 1), in_shell))
      if (("," + head).find("," + c + ",") == std::string::npos) out.push_back(head + c);
    return out;
  }
  auto all = candidates(words, in_shell);
  std::vector<std::string> out;
  for (auto& c : all)
    if (starts_with(c, partial) && (!starts_with(c, "-") || starts_with(partial, "-")))
      out.push_back(std::move(c));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

CLI::App* add_complete(CLI::App& root, CompleteOptions& options) {
  auto* cmd = root.add_subcommand("complete", "Print completions (for the shell scripts)");
  cmd->group("");  // hidden from --help
  cmd->add_option("words", options.words, "The words typed so far; the last is being completed");
  cmd->footer(
      fmt::format("One candidate a line; where a file name belongs, the one line {} ({} for "
                  "a folder), and nothing where no candidate matches.",
                  kCompleteFiles, kCompleteFolders));
  return cmd;
}

int run_complete(const CompleteOptions& options, Io& io) {
  std::vector<std::string> words = options.words;
  std::string partial;
  if (!words.empty()) {
    partial = words.back();
    words.pop_back();
  }
  // A path is for the shell's own file completion: a marker line asks for it, so that the
  // scripts offer file names where a path belongs and nothing where no candidate matched.
  // "--json=FI" asks it for the value after the '='.
  auto path_words = words;
  std::string path_partial = partial;
  if (const auto eq = partial.find('='); starts_with(partial, "--") && eq != std::string::npos) {
    path_words.push_back(partial.substr(0, eq));
    path_partial = partial.substr(eq + 1);
  }
  switch (path_expected(path_words, path_partial, false)) {
    case PathKind::file:
      io.out << kCompleteFiles << "\n";
      return 0;
    case PathKind::folder:
      io.out << kCompleteFolders << "\n";
      return 0;
    case PathKind::none:
      break;
  }
  for (const auto& c : complete(words, partial, false)) io.out << c << "\n";
  return 0;
}

}  // namespace gpulab::app
