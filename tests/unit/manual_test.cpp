// The manual is made from the command line itself: the man page lists every command, option and
// exit code; --help shows examples and the exit codes; every example parses; README's table of
// exit codes is the one of reports/base/errors.hpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "app/command_line.hpp"
#include "app/manual.hpp"
#include "reports/base/errors.hpp"
#include "reports/base/input_file.hpp"
#include "run_cli.hpp"

namespace gpulab::app {
namespace {

using test::run_cli;

std::vector<const CLI::App*> visible(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); });
}

// The words of a command line, after "gpulab".
std::vector<std::string> arguments(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  EXPECT_EQ(words.front(), "gpulab") << line;
  words.erase(words.begin());
  return words;
}

// roff's spelling of text on a line: minus signs escaped.
std::string roff(std::string text) {
  for (std::size_t i = 0; (i = text.find('-', i)) != std::string::npos; i += 2)
    text.insert(i, "\\");
  return text;
}

TEST(Manual, ExitCodesAreOneTable) {
  std::set<int> codes;
  int previous = -1;
  for (const auto& c : kExitCodes) {
    EXPECT_TRUE(codes.insert(static_cast<int>(c.code)).second) << c.name;
    EXPECT_GT(static_cast<int>(c.code), previous) << c.name << ": in order of code";
    previous = static_cast<int>(c.code);
    EXPECT_NE(std::string(c.meaning), "") << c.name;
  }
  EXPECT_EQ(codes, (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7, 126, 127, 130}));
  EXPECT_EQ(static_cast<int>(ExitCode::usage), 2);
  EXPECT_EQ(static_cast<int>(ExitCode::interrupted), 130);
}

TEST(Manual, ManPageListsEveryCommandOptionAndExitCode) {
  const auto r = run_cli({"man"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string& page = r.out;
  EXPECT_EQ(page.find(".TH GPULAB 1"), page.find('\n') + 1) << "a man page, after its comment";
  for (const char* section : {".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH COMMANDS",
                              ".SH OPTIONS", ".SH EXAMPLES", ".SH EXIT STATUS", ".SH ENVIRONMENT"})
    EXPECT_NE(page.find(std::string("\n") + section + "\n"), std::string::npos) << section;

  CommandLine cli;
  const auto commands = visible(cli.app);
  EXPECT_GE(commands.size(), 8u);
  for (const auto* cmd : commands) {
    const std::string heading = ".SS \"gpulab " + cmd->get_name() + "\"\n";
    const auto at = page.find(heading);
    ASSERT_NE(at, std::string::npos) << cmd->get_name();
    const auto end = page.find(".SS ", at + heading.size());
    const std::string section = page.substr(at, end - at);
    for (const auto* opt :
         cmd->get_options([](const CLI::Option* o) { return o->nonpositional(); }))
      for (const auto& name : opt->get_lnames())
        EXPECT_NE(section.find("\\fB" + roff("--" + name) + "\\fR"), std::string::npos)
            << cmd->get_name() << " --" << name;
  }
  for (const char* hidden : {"complete", "man"})
    EXPECT_EQ(page.find(std::string(".SS \"gpulab ") + hidden), std::string::npos) << hidden;

  const auto status = page.find(".SH EXIT STATUS\n");
  for (const auto& c : kExitCodes)
    EXPECT_NE(page.find(fmt::format(".TP\n\\fB{}\\fR\n", static_cast<int>(c.code)), status),
              std::string::npos)
        << c.name;
  for (const auto& e : examples()) EXPECT_NE(page.find(roff(e.line)), std::string::npos) << e.line;
}

TEST(Manual, HelpShowsExamplesAndExitCodes) {
  const auto r = run_cli({"--help"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Examples:\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Exit codes:\n"), std::string::npos) << r.out;
  for (const auto& c : kExitCodes)
    EXPECT_NE(r.out.find(fmt::format("\n  {:<5} {}", static_cast<int>(c.code),
                                     std::string(c.meaning).substr(0, 20))),
              std::string::npos)
        << c.name << " in\n"
        << r.out;

  CommandLine cli;
  for (const auto* cmd : visible(cli.app)) {
    const auto help = run_cli({cmd->get_name(), "--help"});
    EXPECT_EQ(help.code, 0) << cmd->get_name();
    EXPECT_NE(help.out.find("Exit codes: gpulab --help"), std::string::npos) << cmd->get_name();
    for (const auto& e : examples())
      if (cmd->get_name() == e.command)
        EXPECT_NE(help.out.find(e.line), std::string::npos) << e.line;
  }
}

// Each example is a command line the parser takes, of the command it is filed under.
TEST(Manual, ExamplesParse) {
  std::set<std::string> shown;
  for (const auto& e : examples()) {
    const auto args = arguments(e.line);
    EXPECT_EQ(args.front(), e.command) << e.line;
    shown.insert(e.command);
    CommandLine cli;
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    EXPECT_NO_THROW(cli.app.parse(reversed)) << e.line;
  }
  CommandLine cli;
  for (const auto* cmd : visible(cli.app))
    EXPECT_TRUE(shown.count(cmd->get_name())) << cmd->get_name() << " has no example";
}

// Every command line of README's code blocks that starts with `gpulab` is one the parser takes:
// the values of its options are of their types (`--size 16Mi` is not a number).
TEST(Manual, ReadmeCommandLinesParse) {
  std::istringstream in(
      read_file((std::filesystem::path(GPULAB_SOURCE_DIR) / "README.md").string()));
  bool in_block = false;
  int parsed = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) {
      in_block = !in_block;
      continue;
    }
    if (!in_block || line.rfind("gpulab ", 0) != 0 || line.find(" -- ") != std::string::npos ||
        line.find('|') != std::string::npos)
      continue;
    const auto args = arguments(line.substr(0, line.find("  #")));
    CommandLine cli;
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    EXPECT_NO_THROW(cli.app.parse(reversed)) << line;
    ++parsed;
  }
  EXPECT_GE(parsed, 5) << "README's command lines were not found";
}

// README "Exit codes" lists the codes of reports/base/errors.hpp, each once.
TEST(Manual, ReadmeExitCodesAreTheTable) {
  std::istringstream in(
      read_file((std::filesystem::path(GPULAB_SOURCE_DIR) / "README.md").string()));
  std::set<int> listed;
  bool in_section = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Exit codes";
    if (!in_section || line.rfind("| ", 0) != 0) continue;
    const std::string cell = line.substr(2, line.find(" |", 2) - 2);
    if (cell.empty() || cell.find_first_not_of("0123456789") != std::string::npos) continue;
    EXPECT_TRUE(listed.insert(std::stoi(cell)).second) << line;
  }
  std::set<int> codes;
  for (const auto& c : kExitCodes) codes.insert(static_cast<int>(c.code));
  EXPECT_EQ(listed, codes);
}

}  // namespace
}  // namespace gpulab::app
