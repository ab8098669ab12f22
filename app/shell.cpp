#include "app/shell.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "app/command_line.hpp"
#include "app/interrupt.hpp"
#include "app/line_reader.hpp"
#include "reports/base/errors.hpp"
#include "reports/base/output_file.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/principal.hpp"
#include "reports/render/escape.hpp"
#include "reports/render/render_diagnosis.hpp"
#include "reports/render/render_text.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"

namespace gpulab::app {
namespace {

// A session default and the option it stands for, on the commands where it means that option.
struct Setting {
  const char* key;
  std::vector<std::string> spellings;  // the option's names; the first is the one added
  std::vector<std::string> commands;
  const char* help;
};

const std::vector<Setting>& settings() {
  static const std::vector<Setting> s = {
      {"size", {"--size", "-s"}, {"run", "diagnose"}, "problem size of run and diagnose"},
      {"repeat", {"--repeat", "-r"}, {"run", "diagnose"}, "timed launches per variant"},
      {"metrics", {"--metrics", "-m"}, {"run", "diagnose"}, "metric set or list"},
      {"format",
       {"--format", "-f"},
       {"run", "diagnose", "sweep", "compare", "list", "info"},
       "output format, on the commands that have it (text, json, markdown, csv)"},
      {"output", {"--json"}, {"run", "diagnose"}, "folder where every report is also saved"},
  };
  return s;
}

const Setting* find_setting(const std::string& key) {
  for (const auto& s : settings())
    if (key == s.key) return &s;
  return nullptr;
}

// The shell's own commands, for `help` and `help NAME`.
struct Builtin {
  const char* name;
  const char* usage;
  const char* help;
};

const std::vector<Builtin>& builtins() {
  static const std::vector<Builtin> b = {
      {"set", "set [KEY VALUE]", "session defaults for later commands (set alone lists them)"},
      {"set", "set KEY", "clear a default"},
      {"last", "last", "print the last report again"},
      {"save", "save FILE", "write the last report as JSON"},
      {"history", "history", "the commands of this session"},
      {"help", "help [COMMAND]", "this text, or a command's options"},
      {"quit", "quit, exit", "leave (so does the end of input, or Ctrl-D)"},
      {"exit", "quit, exit", "leave (so does the end of input, or Ctrl-D)"},
  };
  return b;
}

bool has_option(const std::vector<std::string>& args, const std::vector<std::string>& names) {
  for (const auto& a : args)
    for (const auto& n : names)
      if (a == n || a.rfind(n + "=", 0) == 0) return true;
  return false;
}

// Why `command OPTION VALUE` would not parse, judged by the command line's own validators;
// nullopt when it would.
std::optional<std::string> rejection(const std::string& command, const std::string& option,
                                     const std::string& value) {
  CommandLine cli;
  std::vector<std::string> args{value, option, command};  // CLI11 pops from the back
  try {
    cli.app.parse(args);
  } catch (const CLI::RequiredError&) {
    // Checked after the options' values: the value passed, only the command's own required
    // arguments (compare's files) are missing from this trial.
  } catch (const CLI::ParseError& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

bool is_command(const std::string& name) {
  CommandLine cli;
  return !cli.app.get_subcommands([&](const CLI::App* s) { return s->get_name() == name; }).empty();
}

std::string history_path() {
  std::string dir;
  if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state) {
    dir = std::string(state) + "/gpulab";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    dir = std::string(home) + "/.local/state/gpulab";
  } else {
    return "";
  }
  // Create the folders one by one (mkdir -p); failure only means no history file.
  for (std::size_t slash = 1; slash != std::string::npos;) {
    slash = dir.find('/', slash + 1);
    ::mkdir(dir.substr(0, slash).c_str(), 0755);
  }
  return dir + "/history";
}

class Shell {
 public:
  Shell(Session& session, Io& io) : session_(session), io_(io) {}

  // Interactive: 0 when the user leaves. A script (input not a terminal): every line runs, and
  // the status is that of the first line that failed, 0 when none did.
  int run() {
    std::optional<InterruptScope> interrupts;
    if (io_.interactive) interrupts.emplace();  // a script stops on Ctrl-C, as scripts do
    auto reader = make_line_reader(*io_.in, io_.interactive, io_.interactive ? history_path() : "");
    if (io_.interactive)
      io_.err << "gpulab shell: the command-line commands, plus set, last, save, history; "
                 "`help` lists them, `quit` leaves.\n";
    const std::string prompt = io_.interactive ? "gpulab> " : "";
    int first_failure = 0;
    while (auto line = reader->read(prompt)) {
      const std::string trimmed = trim(*line);
      if (trimmed.empty() || trimmed[0] == '#') continue;
      reader->remember(trimmed);
      history_.push_back(trimmed);
      const Outcome outcome = execute(trimmed);
      take_interrupt();  // a Ctrl-C no safe point took belonged to that command
      if (first_failure == 0) first_failure = outcome.status;
      if (outcome.leave) break;
    }
    if (io_.interactive) io_.out << "\n";
    return io_.interactive ? 0 : first_failure;
  }

 private:
  struct Outcome {
    int status = 0;
    bool leave = false;
  };

  // A session default: its value and the setting's commands that accept it.
  struct Applied {
    std::string value;
    std::vector<std::string> commands;
  };

  static std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
  }

  Outcome execute(const std::string& line) {
    try {
      const std::vector<std::string> words = split_words(line);
      const std::string& command = words.front();
      if (command == "quit" || command == "exit") return {0, true};
      if (command == "help") return help(words), Outcome{};
      if (command == "set") return set(words), Outcome{};
      if (command == "last") return last(), Outcome{};
      if (command == "save") return save(words), Outcome{};
      if (command == "history") return history(), Outcome{};
      if (command == "shell") throw UsageError("already in the shell");
      const int status = dispatch(with_defaults(words), session_, io_, true);
      if (session_.broken()) io_.err << "gpulab: " << *session_.broken() << " (type quit)\n";
      return {status, false};
    } catch (const Error& e) {
      io_.err << "gpulab: error: " << report::terminal_safe(e.what()) << "\n";
      return {static_cast<int>(e.code()), false};
    }
  }

  std::vector<std::string> with_defaults(std::vector<std::string> words) {
    const std::string command = words.front();
    const bool all_labs = command == "run" && has_option(words, {"--all", "-a"});
    for (const auto& [key, applied] : values_) {
      const Setting* s = find_setting(key);
      const auto& commands = applied.commands;
      if (std::find(commands.begin(), commands.end(), command) == commands.end()) continue;
      if (has_option(words, s->spellings)) continue;
      // Offline diagnosis runs no lab, and listing thresholds takes no options: both refuse
      // the lab-run options a default stands for.
      if (command == "diagnose" && (has_option(words, {"--list-thresholds"}) ||
                                    (has_option(words, {"--report"}) && key != "format" && key != "output")))
        continue;
      if (key == "output") {
        if (all_labs) {  // one report per lab, into the folder
          if (!has_option(words, {"--json-dir"}))
            words.insert(words.end(), {"--json-dir", applied.value});
          continue;
        }
        const std::string lab = words.size() > 1 && words[1][0] != '-' ? words[1] : "report";
        words.insert(words.end(),
                     {"--json", fmt::format("{}/{}-{}.json", applied.value, lab, ++saved_)});
      } else if (key == "size" && all_labs) {
        continue;  // --all runs every lab at its own size
      } else {
        words.insert(words.end(), {s->spellings.front(), applied.value});
      }
    }
    return words;
  }

  void help(const std::vector<std::string>& words) {
    if (words.size() > 2) throw UsageError("help takes one command name");
    if (words.size() == 2) {
      const std::string& name = words[1];
      bool builtin = false;
      for (const auto& b : builtins()) {
        if (name != b.name) continue;
        io_.out << fmt::format("{:<17} {}\n", b.usage, b.help);
        builtin = true;
      }
      if (builtin) return;
      if (!is_command(name) || name == "shell")
        throw UsageError(fmt::format("help: unknown command '{}' (`help` lists them)", name));
      dispatch({name, "--help"}, session_, io_);
      return;
    }
    dispatch({"--help"}, session_, io_);
    io_.out << "\nShell commands:\n";
    const char* shown_usage = "";
    for (const auto& b : builtins()) {
      if (std::string(b.usage) == shown_usage) continue;  // quit and exit share a line
      shown_usage = b.usage;
      io_.out << fmt::format("  {:<17} {}\n", b.usage, b.help);
    }
    io_.out << "Keys:\n";
    for (const auto& s : settings()) io_.out << fmt::format("  {:<8} {}\n", s.key, s.help);
    io_.out << "Ctrl-C stops the running command at its next safe point, or clears the line.\n";
  }

  void set(const std::vector<std::string>& words) {
    if (words.size() == 1) {
      if (values_.empty()) io_.out << "no session defaults\n";
      for (const auto& [key, applied] : values_) {
        std::string commands;
        for (const auto& c : applied.commands) commands += (commands.empty() ? "" : ", ") + c;
        io_.out << fmt::format("{} = {}  ({})\n", key, applied.value, commands);
      }
      return;
    }
    const Setting* s = find_setting(words[1]);
    if (!s) {
      std::string keys;
      for (const auto& k : settings()) keys += (keys.empty() ? "" : ", ") + std::string(k.key);
      throw UsageError(fmt::format("set: unknown key '{}' (keys: {})", words[1], keys));
    }
    if (words.size() == 2) {
      values_.erase(words[1]);
      return;
    }
    if (words.size() > 3) throw UsageError("set takes one key and one value");
    values_[s->key] = {words[2], takers(*s, words[2])};
  }

  // The commands of `s` whose option accepts `value`: a default applies only where the same
  // value typed on the command line would. Throws UsageError when none accepts it.
  std::vector<std::string> takers(const Setting& s, const std::string& value) {
    if (std::string(s.key) == "output") {
      struct stat st {};
      if (::stat(value.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw UsageError(fmt::format("set output: '{}' is not a folder", value));
      return s.commands;
    }
    if (std::string(s.key) == "metrics")
      report::metrics::resolve("--metrics", value);  // what run checks, up front
    std::vector<std::string> commands;
    std::optional<std::string> why;
    for (const auto& c : s.commands) {
      auto rejected = rejection(c, s.spellings.front(), value);
      if (!rejected)
        commands.push_back(c);
      else if (!why)
        why = std::move(rejected);
    }
    if (commands.empty()) throw UsageError(fmt::format("set {} {}: {}", s.key, value, *why));
    return commands;
  }

  const report::Report& last_report() const {
    if (!session_.last_report()) throw UsageError("no report yet: run or diagnose something first");
    return *session_.last_report();
  }

  void last() {
    const auto& r = last_report();
    io_.out << report::render_text(r);
    if (report::has_diagnosis(r)) io_.out << "\n" << report::render_diagnosis(r);
  }

  // The message goes to stderr: stdout may be collecting CSV or JSON output.
  void save(const std::vector<std::string>& words) {
    if (words.size() != 2) throw UsageError("save takes one file name");
    write_output(words[1], report::report_file_text(last_report()), io_.out);
    io_.err << "saved " << words[1] << "\n";
  }

  void history() {
    for (std::size_t i = 0; i < history_.size(); ++i)
      io_.out << fmt::format("{:>4}  {}\n", i + 1, history_[i]);
  }

  Session& session_;
  Io& io_;
  std::map<std::string, Applied> values_;
  std::vector<std::string> history_;
  int saved_ = 0;
};

}  // namespace

const std::vector<std::string>& shell_builtins() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& b : builtins())
      if (std::find(out.begin(), out.end(), b.name) == out.end()) out.emplace_back(b.name);
    return out;
  }();
  return names;
}

std::vector<std::string> shell_setting_names() {
  std::vector<std::string> out;
  for (const auto& s : settings()) out.emplace_back(s.key);
  return out;
}

std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < line.size()) {
        word += line[++i];
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote) throw UsageError("unterminated quote");
  if (in_word) words.push_back(word);
  return words;
}

int run_shell(Session& session, Io& io) {
  if (!io.in) throw UsageError("the shell needs an input stream");
  return Shell(session, io).run();
}

}  // namespace gpulab::app
