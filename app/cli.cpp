#include "app/cli.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "app/command_line.hpp"
#include "app/manual.hpp"
#include "app/option_checks.hpp"
#include "app/shell.hpp"
#include "app/version.hpp"
#include "reports/base/errors.hpp"
#include "reports/base/user_input.hpp"
#include "reports/render/escape.hpp"

namespace gpulab::app {

CommandLine::CommandLine()
    : app("gpulab: CUDA optimization labs measured with hardware counters", "gpulab") {
  app.set_version_flag("--version", std::string("gpulab ") + kVersion + " (" + kGitSha + ")");
  app.require_subcommand(0, 1);
  list_cmd = add_list(app, list);
  info_cmd = add_info(app, info);
  run_cmd = add_run(app, run);
  sweep_cmd = add_sweep(app, sweep);
  diagnose_cmd = add_diagnose(app, diagnose);
  compare_cmd = add_compare(app, compare);
  selftest_cmd = add_selftest(app, selftest);
  report_cmd = add_report(app, report);
  export_cmd = add_export(app, export_options);
  source_cmd = add_source(app, source);
  profile_cmd = add_profile(app, profile);
  shell_cmd = app.add_subcommand("shell", "Interactive session: the same commands, one GPU setup");
  complete_cmd = add_complete(app, complete);
  man_cmd = add_man(app);
  apply_value_grammar(app);
  app.footer(
      "gpulab help CMD (or gpulab CMD --help) shows a command's options. An option's value is "
      "the next word or follows '=' (--json=FILE); it is never empty and never starts with '-' "
      "unless it is a number (name such a file ./-file).\n");
  add_manual_footers(app);
}

Io standard_io() {
  const bool out_tty = ::isatty(STDOUT_FILENO) == 1;
  const bool err_tty = ::isatty(STDERR_FILENO) == 1;
  const char* no_color = std::getenv("NO_COLOR");
  Io io{std::cout, std::cerr};
  io.progress = err_tty;
  io.color = out_tty && !(no_color && *no_color);
  io.in = &std::cin;
  io.interactive = ::isatty(STDIN_FILENO) == 1;
  winsize size{};
  if (out_tty && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0)
    io.columns = size.ws_col;
  return io;
}

namespace {

// `gpulab help [CMD]` is `gpulab [CMD] --help`.
std::vector<std::string> without_help_command(const std::vector<std::string>& args,
                                              CLI::App& app) {
  if (args.empty() || args.front() != "help") return args;
  if (args.size() > 2) throw UsageError("help takes at most one command (gpulab help CMD)");
  if (args.size() == 1) return {"--help"};
  const auto subs = app.get_subcommands([&](const CLI::App* s) {
    return s->get_name() == args[1] && !s->get_group().empty();  // hidden commands have no group
  });
  if (subs.empty())
    throw UsageError(fmt::format("help: unknown command '{}' (gpulab --help lists them)", args[1]));
  return {args[1], "--help"};
}

// Where a parse error sends the user: in the shell, its own `help` (of the command, when the
// line named one), since `gpulab --help` is a command line the shell does not take.
std::string help_hint(const std::vector<std::string>& args, CLI::App& app, bool in_shell) {
  if (!in_shell) return "gpulab --help";
  if (args.empty()) return "help";
  const auto named = app.get_subcommands([&](const CLI::App* s) {
    return s->get_name() == args.front() && !s->get_group().empty();  // not the hidden ones
  });
  return named.empty() ? "help" : "help " + args.front();
}

// CLI11 names an option by its first long name ("--html: the value is empty"), which a user who
// typed another of its names (-o) may not know: the message names it as typed.
std::string as_typed(const std::string& message, CLI::App& app,
                     const std::vector<std::string>& args) {
  const auto colon = message.find(": ");
  if (message.rfind("--", 0) != 0 || colon == std::string::npos) return message;
  const std::string named = message.substr(0, colon);
  const CLI::Option* opt = nullptr;
  for (const auto* sub : app.get_subcommands())  // the command being parsed
    if (!opt) opt = sub->get_option_no_throw(named);
  if (!opt) opt = app.get_option_no_throw(named);
  if (!opt) return message;
  std::string typed;
  for (const auto& word : args) {
    if (word == "--") break;  // the words after it are not options
    if (word == named || word.rfind(named + "=", 0) == 0) return message;
    for (const auto& l : opt->get_lnames())
      if (typed.empty() && (word == "--" + l || word.rfind("--" + l + "=", 0) == 0))
        typed = "--" + l;
    for (const auto& s : opt->get_snames())
      if (typed.empty() && word.rfind("-" + s, 0) == 0 && word.rfind("--", 0) != 0) typed = "-" + s;
  }
  return typed.empty() ? message : typed + message.substr(colon);
}

// CLI11's "The following arguments were not expected: ..." in gpulab's words, naming the first
// word it did not take, with a suggestion when a known name is close: an unknown command (no
// command parsed yet), an unknown option of the command, or an argument it takes none of.
std::optional<std::string> unexpected_word_message(CLI::App& app,
                                                   const std::vector<std::string>& args) {
  const auto left = app.remaining(true);
  const auto first = std::find_if(args.begin(), args.end(), [&](const std::string& w) {
    return std::find(left.begin(), left.end(), w) != left.end();
  });
  if (first == args.end()) return std::nullopt;
  const std::string& word = *first;
  const CLI::App* command = nullptr;
  for (const auto* sub : app.get_subcommands()) command = sub;  // the one parsed
  const auto with_hint = [](std::string message, const std::string& hint) {
    return hint.empty() ? message : message + "; " + hint;
  };
  if (word.size() > 1 && word[0] == '-') {
    const std::string name = word.substr(0, word.find('='));
    std::vector<std::string> known;
    for (const auto* owner : {command, static_cast<const CLI::App*>(&app)}) {
      if (!owner) continue;
      for (const auto* opt : owner->get_options()) {
        for (const auto& l : opt->get_lnames()) known.push_back("--" + l);
        for (const auto& n : opt->get_snames()) known.push_back("-" + n);
      }
    }
    return with_hint(command ? fmt::format("unknown option '{}' for {}", name, command->get_name())
                             : fmt::format("unknown option '{}'", name),
                     did_you_mean(name, known));
  }
  if (!command) {
    std::vector<std::string> known;
    for (const auto* sub : app.get_subcommands([](const CLI::App* s) {
           return !s->get_group().empty();  // not the hidden ones
         }))
      known.push_back(sub->get_name());
    return with_hint(fmt::format("unknown command '{}'", word), did_you_mean(word, known));
  }
  return fmt::format("unexpected argument '{}' for {}", word, command->get_name());
}

}  // namespace

int dispatch(const std::vector<std::string>& given, Session& session, Io& io, bool in_shell) {
  CommandLine cli;
  std::vector<std::string> args;
  try {
    args = without_help_command(given, cli.app);
  } catch (const Error& e) {
    io.err << "gpulab: error: " << e.what() << "\n";
    return static_cast<int>(e.code());
  }
  std::vector<std::string> gpulab_words = args;  // a profiled program's words are not gpulab's
  const auto program = split_off_program(gpulab_words, *cli.profile_cmd);
  try {
    // CLI11 pops from the back.
    std::vector<std::string> reversed(gpulab_words.rbegin(), gpulab_words.rend());
    cli.app.parse(reversed);
    if (cli.profile_cmd->parsed()) cli.profile.command = program;
  } catch (const CLI::CallForHelp& e) {
    return cli.app.exit(e, io.out, io.err);
  } catch (const CLI::CallForAllHelp& e) {
    return cli.app.exit(e, io.out, io.err);
  } catch (const CLI::CallForVersion& e) {
    return cli.app.exit(e, io.out, io.err);
  } catch (const CLI::ExtrasError& e) {
    const auto message = unexpected_word_message(cli.app, gpulab_words);
    io.err << "gpulab: error: "
           << report::terminal_safe(message ? *message : as_typed(e.what(), cli.app, args))
           << " (see " << report::terminal_safe(help_hint(args, cli.app, in_shell)) << ")\n";
    return static_cast<int>(ExitCode::usage);
  } catch (const CLI::ParseError& e) {
    io.err << "gpulab: error: " << report::terminal_safe(as_typed(e.what(), cli.app, args))
           << " (see " << report::terminal_safe(help_hint(args, cli.app, in_shell)) << ")\n";
    return static_cast<int>(ExitCode::usage);
  }

  try {
    if (cli.list_cmd->parsed()) return run_list(cli.list, io);
    if (cli.info_cmd->parsed()) return run_info(cli.info, session, io);
    if (cli.run_cmd->parsed()) return run_run(cli.run, session, io, args);
    if (cli.sweep_cmd->parsed()) return run_sweep(cli.sweep, session, io, args);
    if (cli.compare_cmd->parsed()) return run_compare(cli.compare, io);
    if (cli.diagnose_cmd->parsed()) return run_diagnose(cli.diagnose, session, io, args);
    if (cli.selftest_cmd->parsed()) return run_selftest(cli.selftest, session, io);
    if (cli.report_cmd->parsed()) return run_report(cli.report, args, io);
    if (cli.export_cmd->parsed()) return run_export(cli.export_options, io);
    if (cli.source_cmd->parsed()) return run_source(cli.source, session, io, args);
    if (cli.profile_cmd->parsed()) return run_profile(cli.profile, session, io, args);
    if (cli.shell_cmd->parsed()) return run_shell(session, io);
    if (cli.complete_cmd->parsed()) return run_complete(cli.complete, io);
    if (cli.man_cmd->parsed()) return run_man(cli.app, io);
    io.out << cli.app.help();
    return static_cast<int>(ExitCode::ok);
  } catch (const Error& e) {
    // Messages quote input (report strings, file names): never raw controls on the terminal.
    io.err << "gpulab: error: " << report::terminal_safe(e.what()) << "\n";
    session.note_error(e);
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    io.err << "gpulab: internal error: " << report::terminal_safe(e.what()) << "\n";
    return static_cast<int>(ExitCode::internal);
  }
}

}  // namespace gpulab::app
