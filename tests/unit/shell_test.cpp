// The interactive shell, driven through a pipe (scripted sessions) and under a pseudo-terminal
// (`script` from util-linux): prompt, completion, colors and NO_COLOR. Also: every command that
// runs without a GPU prints valid JSON, and nothing else, with --format json.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app/cli.hpp"
#include "app/interrupt.hpp"
#include "app/line_reader.hpp"
#include "app/shell.hpp"
#include "reports/base/errors.hpp"
#include "unit/shell_command.hpp"
#include "unit/temp_folder.hpp"

namespace gpulab::app {
namespace {

const std::string kBinary = GPULAB_BINARY;
const std::string kFixture = std::string(GPULAB_FIXTURES_DIR) + "/transpose_h200.json";
const std::string kFixture4096 = std::string(GPULAB_FIXTURES_DIR) + "/transpose_4096_h200.json";

using test::have_script;
using test::sh;

// Each test works in a folder of its own: the shell's input, its HOME (history) and TMPDIR.
std::string write_input(const test::TempFolder& folder, const std::string& name,
                        const std::string& text) {
  const std::string path = folder / name;
  std::ofstream(path) << text;
  return path;
}

// `command` under a pseudo-terminal. `exec`, because script(1) runs it through $SHELL or /bin/sh:
// dash forks instead, stays in the terminal's foreground group, and dies of the Ctrl-C that
// gpulab catches, so the status would be the shell's 130 rather than gpulab's.
std::string on_terminal(const std::string& command) {
  return "script -qec 'exec " + command + "' /dev/null";
}

TEST(Shell, ScriptedSessionThroughAPipe) {
  test::TempFolder folder;
  const std::string input = write_input(folder, "session.txt",
                                        "# a scripted session\n"
                                        "list\n"
                                        "help\n"
                                        "set repeat 3\n"
                                        "set\n"
                                        "diagnose --report " +
                                            kFixture +
                                            " --variant tiled\n"
                                            "last\n"
                                            "compare " +
                                            kFixture + " " + kFixture4096 +
                                            "\n"
                                            "run nosuchlab\n"
                                            "history\n"
                                            "quit\n"
                                            "list\n");
  const auto out = sh(kBinary + " shell < " + input + " 2>&1");
  EXPECT_EQ(out.code, 2) << "the first failing line's status (run nosuchlab)\n" << out.text;
  for (const char* expected :
       {"transpose  (global coalescing",           // list
        "Shell commands:",                         // help
        "repeat = 3  (run, diagnose)",             // set
        "principal: shared-bank-conflicts",        // diagnose --report
        "counter ",                                // last: the report's counters
        "faster (3.",                              // compare
        "gpulab: error: unknown lab 'nosuchlab'",  // an error returns to the prompt
        "   4  set"})                              // history
    EXPECT_NE(out.text.find(expected), std::string::npos) << expected << "\n" << out.text;
  // Nothing after quit runs: the list output appears once.
  EXPECT_EQ(out.text.find("transpose  (global"), out.text.rfind("transpose  (global"));
  EXPECT_EQ(out.text.find("gpulab> "), std::string::npos) << "no prompt when input is a pipe";
}

TEST(Shell, EndOfInputEndsTheSessionWithExit0) {
  const auto out = sh("printf 'list\\n' | " + kBinary + " shell 2>&1");
  EXPECT_EQ(out.code, 0);
  EXPECT_NE(out.text.find("transpose"), std::string::npos);
}

TEST(Shell, SetAndSaveRejectBadInput) {
  test::TempFolder folder;
  const std::string input =
      write_input(folder, "bad.txt",
                  "set colour red\nset output /nonexistent-folder\nsave\nlast\nsave x.json\n");
  const auto out = sh(kBinary + " shell < " + input + " 2>&1");
  EXPECT_EQ(out.code, 2);
  EXPECT_NE(out.text.find("set: unknown key 'colour'"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("is not a folder"), std::string::npos);
  EXPECT_NE(out.text.find("save takes one file name"), std::string::npos);
  EXPECT_NE(out.text.find("no report yet"), std::string::npos);
}

TEST(Shell, ScriptStatusIsTheFirstFailingLine) {
  EXPECT_EQ(sh("printf 'list\\nhelp list\\n' | " + kBinary + " shell >/dev/null 2>&1").code, 0);
  const auto out =
      sh("printf 'list\\ncompare /nonexistent.json\\nlist\\n' | " + kBinary + " shell 2>&1");
  EXPECT_EQ(out.code, 2) << out.text;
  EXPECT_NE(out.text.rfind("transpose  (global"), out.text.find("transpose  (global"))
      << "the lines after the failure still run";
}

// `gpulab --help` is not a line the shell takes: its usage errors point at its own help.
TEST(Shell, UsageErrorsPointAtTheShellsHelp) {
  const auto out = sh("printf 'run transpose --repeat 0\\nfrobnicate\\nhelp run\\n' | " + kBinary +
                      " shell 2>&1");
  EXPECT_EQ(out.code, 2) << out.text;
  EXPECT_NE(out.text.find("--repeat: 0 is out of range (allowed: 1 to 100000) (see help run)\n"),
            std::string::npos)
      << out.text;
  EXPECT_NE(out.text.find("unknown command 'frobnicate' (see help)\n"), std::string::npos)
      << out.text;
  EXPECT_EQ(out.text.find("(see gpulab --help)"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("--repeat"), out.text.rfind("--repeat")) << "help run shows the option";
  // The command line keeps its own hint.
  const auto cli = sh(kBinary + " run transpose --repeat 0 2>&1");
  EXPECT_NE(cli.text.find("(see gpulab --help)"), std::string::npos) << cli.text;
}

TEST(Shell, SetValidatesLikeTheCommandLineAndAppliesWhereAccepted) {
  test::TempFolder folder;
  const std::string input =
      write_input(folder, "set.txt",
                  "set repeat 0\nset format bogus\nset size abc\nset metrics nosuchset\nset\n"
                  "set format markdown\nset\nlist\ncompare " +
                      kFixture + " " + kFixture4096 + "\n");
  const auto out = sh(kBinary + " shell < " + input + " 2>&1");
  EXPECT_EQ(out.code, 2) << out.text;
  for (const char* expected :
       {"set repeat 0: --repeat: 0 is out of range",
        "set format bogus: --format: 'bogus' is not one of",
        "set size abc: --size: 'abc' is not an integer", "nosuchset",
        "no session defaults",  // none of the bad values was kept
        "format = markdown  (run, diagnose, sweep, compare, list)",  // not info's
        "| lab | topic | variant |",                                 // list: Markdown
        "| variant | A median |"})                                   // compare: Markdown
    EXPECT_NE(out.text.find(expected), std::string::npos) << expected << "\n" << out.text;
  EXPECT_EQ(out.text.find("--format: 'markdown' is not one of"), std::string::npos) << out.text;
}

TEST(Shell, SaveTalksOnStderrAndHelpNamesUnknownCommands) {
  test::TempFolder folder;
  const std::string saved = folder / "saved.json";
  const auto out = sh("printf 'diagnose --report " + kFixture + " --format csv\\nsave " + saved +
                      "\\n' | " + kBinary + " shell 2>/dev/null");
  EXPECT_EQ(out.code, 0) << out.text;
  EXPECT_EQ(out.text.find("saved"), std::string::npos) << "stdout holds only the CSV:\n"
                                                       << out.text;

  const auto help = sh("printf 'help nosuch\\n' | " + kBinary + " shell 2>&1");
  EXPECT_EQ(help.code, 2);
  EXPECT_NE(help.text.find("help: unknown command 'nosuch'"), std::string::npos) << help.text;
  EXPECT_EQ(help.text.find("Shell commands:"), std::string::npos) << help.text;
  const auto help_save = sh("printf 'help save\\n' | " + kBinary + " shell 2>&1");
  EXPECT_NE(help_save.text.find("save FILE"), std::string::npos) << help_save.text;
}

TEST(Interrupt, CtrlCRaisesAFlagThatTheNextSafePointTakes) {
  test::DefaultSignals terminal_like;  // a signal ignored on entry (a background job's) stays so
  {
    InterruptScope scope;
    std::raise(SIGINT);  // would end the test process without the scope
    EXPECT_TRUE(interrupt_pending());
    try {
      stop_if_interrupted();
      ADD_FAILURE() << "no Interrupted at the safe point";
    } catch (const Interrupted& e) {
      EXPECT_EQ(e.code(), ExitCode::interrupted);
    }
    EXPECT_FALSE(interrupt_pending()) << "taken";
    EXPECT_NO_THROW(stop_if_interrupted());
  }
  EXPECT_FALSE(interrupt_pending());
}

// A sweep's scope: SIGTERM raises the flag as Ctrl-C does and is remembered as what stopped the
// command; a signal ignored on entry (nohup's SIGHUP) stays ignored.
TEST(Interrupt, ASweepsScopeTakesSigtermAndLeavesIgnoredSignalsIgnored) {
  test::DefaultSignals terminal_like;
  struct sigaction ignore {};
  struct sigaction before {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGHUP, &ignore, &before);
  {
    InterruptScope scope({SIGINT, SIGTERM, SIGHUP});
    struct sigaction hup {};
    ::sigaction(SIGHUP, nullptr, &hup);
    EXPECT_EQ(hup.sa_handler, SIG_IGN);
    std::raise(SIGTERM);  // would end the test process without the scope
    try {
      stop_if_interrupted();
      ADD_FAILURE() << "no Interrupted at the safe point";
    } catch (const Interrupted&) {
      EXPECT_EQ(interrupting_signal(), SIGTERM);
    }
  }
  struct sigaction term {};
  ::sigaction(SIGTERM, nullptr, &term);
  EXPECT_EQ(term.sa_handler, SIG_DFL) << "restored";
  ::sigaction(SIGHUP, &before, nullptr);
}

// After writing what it measured, a stopped sweep ends as the signal ends a process: the parent
// sees the signal, not an exit status.
TEST(InterruptDeathTest, EndAsSignalEndsTheProcessByThatSignal) {
  EXPECT_EXIT(end_as_signal(SIGTERM), ::testing::KilledBySignal(SIGTERM), "");
  EXPECT_EXIT(end_as_signal(SIGHUP), ::testing::KilledBySignal(SIGHUP), "");
}

TEST(Shell, SplitWords) {
  EXPECT_EQ(split_words("run transpose  --size 64"),
            (std::vector<std::string>{"run", "transpose", "--size", "64"}));
  EXPECT_EQ(split_words("save 'my report.json'"), (std::vector<std::string>{"save", "my report.json"}));
  EXPECT_EQ(split_words(R"(save "a \"b\"" c\ d)"), (std::vector<std::string>{"save", "a \"b\"", "c d"}));
  EXPECT_THROW(split_words("save 'open"), UsageError);
}

TEST(Completion, CommandsLabsVariantsOptions) {
  EXPECT_EQ(complete({}, "di", false), (std::vector<std::string>{"diagnose"}));
  const auto in_shell = complete({}, "", true);
  EXPECT_NE(std::find(in_shell.begin(), in_shell.end(), "quit"), in_shell.end());
  EXPECT_EQ(std::find(in_shell.begin(), in_shell.end(), "shell"), in_shell.end());
  EXPECT_EQ(complete({"run"}, "trans", false), (std::vector<std::string>{"transpose"}));
  EXPECT_EQ(complete({"run", "transpose", "--variant"}, "p", false),
            (std::vector<std::string>{"padded"}));
  EXPECT_EQ(complete({"run", "transpose"}, "--var", false), (std::vector<std::string>{"--variant"}));
  EXPECT_EQ(complete({"run", "transpose", "--metrics"}, "f", false), (std::vector<std::string>{"full"}));
  EXPECT_TRUE(complete({"run", "transpose", "--size"}, "", false).empty()) << "a number";
  EXPECT_EQ(complete({"set"}, "rep", true), (std::vector<std::string>{"repeat"}));
  const auto out = sh(kBinary + " complete -- diagnose transpose --variant ''");
  EXPECT_NE(out.text.find("swizzled\n"), std::string::npos) << out.text;
}

TEST(Shell, PromptAndTabCompletionUnderATerminal) {
  if (!have_script()) GTEST_SKIP() << "needs `script` (util-linux) for a pseudo-terminal";
  if (!has_line_editing()) GTEST_SKIP() << "built without libedit: no completion to test";
  test::TempFolder folder;
  // "li<TAB>" must complete to "list"; then quit.
  const auto out = sh("printf 'li\\t\\nquit\\n' | HOME=" + folder.path + " TMPDIR=" + folder.path +
                      " " + on_terminal(kBinary + " shell") + " 2>&1");
  EXPECT_EQ(out.code, 0) << out.text;
  EXPECT_NE(out.text.find("gpulab> "), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("global coalescing"), std::string::npos)
      << "li<TAB> ran list:\n" << out.text;
}

TEST(Shell, CtrlCClearsTheLineAndTheShellGoesOn) {
  if (!have_script()) GTEST_SKIP() << "needs `script` (util-linux) for a pseudo-terminal";
  test::TempFolder folder;
  // "lis", then Ctrl-C (the terminal turns it into SIGINT), then a whole command and quit.
  const auto out =
      sh("(sleep 1; printf 'lis\\003'; sleep 1; printf 'list\\nquit\\n') | HOME=" + folder.path +
         " " + on_terminal(kBinary + " shell") + " 2>&1");
  EXPECT_EQ(out.code, 0) << "the shell survived Ctrl-C:\n" << out.text;
  EXPECT_NE(out.text.find("global coalescing"), std::string::npos) << out.text;
  EXPECT_EQ(out.text.find("unknown"), std::string::npos) << "'lis' was discarded:\n" << out.text;
}

// Ctrl-C while a command runs: the terminal signals the whole foreground group, so both the
// profiled program and gpulab get SIGINT. The program dies of it; gpulab reports that, and the
// shell goes on. `sleep` loads no CUDA, so this needs no GPU.
TEST(Shell, CtrlCDuringACommandStopsItAndTheShellGoesOn) {
  if (!have_script()) GTEST_SKIP() << "needs `script` (util-linux) for a pseudo-terminal";
  test::DefaultSignals terminal;
  test::TempFolder folder;
  const auto begin = std::chrono::steady_clock::now();
  // `timeout` bounds the test should the shell never come back; the program would sleep 30 s.
  const auto out =
      sh("(sleep 1; printf 'profile -- sleep 30\\n'; sleep 2; printf '\\003'; "
         "sleep 1; printf 'list\\nquit\\n') | HOME=" +
         folder.path + " TMPDIR=" + folder.path + " timeout 20 " + on_terminal(kBinary + " shell") +
         " 2>&1");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_EQ(out.code, 0) << "the shell survived Ctrl-C and quit left it:\n" << out.text;
  EXPECT_LT(seconds, 15) << "the program was stopped, not waited for:\n" << out.text;
  const auto killed = out.text.find("killed by SIGINT");
  ASSERT_NE(killed, std::string::npos) << "the program died of the Ctrl-C:\n" << out.text;
  const auto prompt = out.text.find("gpulab> ", killed);
  ASSERT_NE(prompt, std::string::npos) << "the prompt came back:\n" << out.text;
  EXPECT_NE(out.text.find("global coalescing", prompt), std::string::npos)
      << "the next command ran:\n"
      << out.text;
}

TEST(Shell, HistoryPersistsInLibeditsFormatAndIsRecalled) {
  if (!have_script()) GTEST_SKIP() << "needs `script` (util-linux) for a pseudo-terminal";
  if (!has_line_editing()) GTEST_SKIP() << "built without libedit: no history";
  test::TempFolder folder;
  const std::string state = folder / "state";
  const std::string env = "XDG_STATE_HOME=" + state + " TERM=xterm ";
  sh("printf 'list\\nquit\\n' | " + env + on_terminal(kBinary + " shell"));
  std::ifstream file(state + "/gpulab/history");
  std::string first;
  std::getline(file, first);
  EXPECT_EQ(first, "_HiStOrY_V2_") << "libedit's own format, which read_history loads";
  // A new session: Ctrl-P twice (back past `quit`) and Enter run the last session's `list`.
  const auto out = sh("(sleep 1; printf '\\020\\020\\n'; sleep 1; printf 'quit\\n') | " + env +
                      on_terminal(kBinary + " shell") + " 2>&1");
  EXPECT_NE(out.text.find("global coalescing"), std::string::npos) << out.text;
}

TEST(Shell, HistoryFileIsBounded) {
  if (!has_line_editing()) GTEST_SKIP() << "built without libedit: no history";
  test::TempFolder folder;
  const std::string path = folder / "history";
  std::istringstream none;
  {
    auto reader = make_line_reader(none, true, path);
    for (int i = 0; i < kHistoryLines + 50; ++i) reader->remember("list " + std::to_string(i));
  }
  std::ifstream file(path);
  int lines = 0;
  std::string line, last;
  while (std::getline(file, line)) ++lines, last = line;
  EXPECT_EQ(lines, kHistoryLines + 1) << "the format's header line, then the newest lines";
  EXPECT_EQ(last, "list\\040" + std::to_string(kHistoryLines + 49)) << "spaces encoded by libedit";
}

TEST(Colors, OnlyOnATerminalAndNeverWithNoColor) {
  if (!have_script()) GTEST_SKIP() << "needs `script` (util-linux) for a pseudo-terminal";
  const std::string compare = kBinary + " compare " + kFixture + " " + kFixture4096;
  const auto tty = sh(on_terminal(compare));
  EXPECT_NE(tty.text.find("\033[32m"), std::string::npos) << "green verdicts on a terminal";
  const auto no_color = sh("NO_COLOR=1 " + on_terminal(compare));
  EXPECT_EQ(no_color.text.find("\033["), std::string::npos) << no_color.text;
  const auto piped = sh(compare);
  EXPECT_EQ(piped.text.find("\033["), std::string::npos) << "no colors into a pipe";
}

TEST(Colors, TheSourceViewOnlyOnATerminalAndNeverWithNoColor) {
  if (!have_script()) GTEST_SKIP() << "needs `script` (util-linux) for a pseudo-terminal";
  const std::string source = kBinary + " source --report " + std::string(GPULAB_FIXTURES_DIR) +
                             "/source/transpose_naive.hand-made.json";
  EXPECT_NE(sh(on_terminal(source)).text.find("\033[31m>>"), std::string::npos)
      << "hot lines in red on a terminal";
  EXPECT_EQ(sh("NO_COLOR=1 " + on_terminal(source)).text.find("\033["), std::string::npos);
  EXPECT_EQ(sh(source).text.find("\033["), std::string::npos) << "no colors into a pipe";
}

TEST(JsonOutput, EveryCommandPrintsOnlyJson) {
  for (const std::string& args :
       {std::string("list --format json"), std::string("list --metrics --format json"),
        "diagnose --report " + kFixture + " --format json",
        "compare " + kFixture + " " + kFixture4096 + " --format json",
        "compare " + kFixture + " --variants naive,padded --format json"}) {
    const auto out = sh(kBinary + " " + args + " 2>/dev/null");
    EXPECT_EQ(out.code, 0) << args;
    EXPECT_TRUE(nlohmann::json::accept(out.text)) << args << "\n" << out.text.substr(0, 200);
  }
}

}  // namespace
}  // namespace gpulab::app
