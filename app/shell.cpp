#include "app/shell.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "app/line_reader.hpp"
#include "reports/diagnosis.hpp"
#include "reports/errors.hpp"
#include "reports/render_diagnosis.hpp"
#include "reports/render_text.hpp"
#include "reports/report_json.hpp"

namespace gpulab::app {
namespace {

// A session default and the options it stands for, on the commands that take them.
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
      {"format", {"--format", "-f"}, {"run", "diagnose", "compare", "list", "info"},
       "output format (text, json, ...)"},
      {"output", {"--json"}, {"run", "diagnose"}, "folder where every report is also saved"},
  };
  return s;
}

const Setting* find_setting(const std::string& key) {
  for (const auto& s : settings())
    if (key == s.key) return &s;
  return nullptr;
}

bool has_option(const std::vector<std::string>& args, const std::vector<std::string>& names) {
  for (const auto& a : args)
    for (const auto& n : names)
      if (a == n || a.rfind(n + "=", 0) == 0) return true;
  return false;
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

  int run() {
    auto reader = make_line_reader(*io_.in, io_.interactive, io_.interactive ? history_path() : "");
    if (io_.interactive)
      io_.out << "gpulab shell: the command-line commands, plus set, last, save, history; "
                 "`help` lists them, `quit` leaves.\n";
    const std::string prompt = io_.interactive ? "gpulab> " : "";
    while (auto line = reader->read(prompt)) {
      const std::string trimmed = trim(*line);
      if (trimmed.empty() || trimmed[0] == '#') continue;
      reader->remember(trimmed);
      history_.push_back(trimmed);
      if (!execute(trimmed)) return 0;
    }
    if (io_.interactive) io_.out << "\n";
    return 0;
  }

 private:
  static std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
  }

  // Runs one line; false when the shell should end.
  bool execute(const std::string& line) {
    std::vector<std::string> words;
    try {
      words = split_words(line);
    } catch (const Error& e) {
      io_.err << "gpulab: error: " << e.what() << "\n";
      return true;
    }
    const std::string& command = words.front();
    if (command == "quit" || command == "exit") return false;
    try {
      if (command == "help") return help(words), true;
      if (command == "set") return set(words), true;
      if (command == "last") return last(), true;
      if (command == "save") return save(words), true;
      if (command == "history") return history(), true;
      if (command == "shell") throw UsageError("already in the shell");
    } catch (const Error& e) {
      io_.err << "gpulab: error: " << e.what() << "\n";
      return true;
    }
    dispatch(with_defaults(words), session_, io_);
    if (session_.broken())
      io_.err << "gpulab: " << *session_.broken() << " (type quit)\n";
    return true;
  }

  std::vector<std::string> with_defaults(std::vector<std::string> words) {
    const std::string command = words.front();
    for (const auto& [key, value] : values_) {
      const Setting* s = find_setting(key);
      if (std::find(s->commands.begin(), s->commands.end(), command) == s->commands.end()) continue;
      if (has_option(words, s->spellings)) continue;
      // Offline diagnosis runs no lab, and listing thresholds takes no options: both refuse
      // the lab-run options a default stands for.
      if (command == "diagnose" && (has_option(words, {"--list-thresholds"}) ||
                                    (has_option(words, {"--report"}) && key != "format" && key != "output")))
        continue;
      if (key == "output") {
        const std::string lab = words.size() > 1 && words[1][0] != '-' ? words[1] : "report";
        words.insert(words.end(), {"--json", fmt::format("{}/{}-{}.json", value, lab, ++saved_)});
      } else {
        words.insert(words.end(), {s->spellings.front(), value});
      }
    }
    return words;
  }

  void help(const std::vector<std::string>& words) {
    if (words.size() > 1) {
      dispatch({words[1], "--help"}, session_, io_);
      return;
    }
    dispatch({"--help"}, session_, io_);
    io_.out << "\nShell commands:\n"
               "  set [KEY VALUE]   session defaults for later commands (set alone lists them)\n"
               "  set KEY           clear a default\n"
               "  last              print the last report again\n"
               "  save FILE         write the last report as JSON\n"
               "  history           the commands of this session\n"
               "  help [COMMAND]    this text, or a command's options\n"
               "  quit, exit        leave (so does the end of input)\n"
               "Keys:\n";
    for (const auto& s : settings()) io_.out << fmt::format("  {:<8} {}\n", s.key, s.help);
  }

  void set(const std::vector<std::string>& words) {
    if (words.size() == 1) {
      if (values_.empty()) io_.out << "no session defaults\n";
      for (const auto& [key, value] : values_) io_.out << key << " = " << value << "\n";
      return;
    }
    if (!find_setting(words[1])) {
      std::string keys;
      for (const auto& s : settings()) keys += (keys.empty() ? "" : ", ") + std::string(s.key);
      throw UsageError(fmt::format("set: unknown key '{}' (keys: {})", words[1], keys));
    }
    if (words.size() == 2) {
      values_.erase(words[1]);
      return;
    }
    if (words.size() > 3) throw UsageError("set takes one key and one value");
    if (words[1] == "output") {
      struct stat st {};
      if (::stat(words[2].c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw UsageError(fmt::format("set output: '{}' is not a folder", words[2]));
    }
    values_[words[1]] = words[2];
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

  void save(const std::vector<std::string>& words) {
    if (words.size() != 2) throw UsageError("save takes one file name");
    report::save_report(words[1], last_report());
    io_.out << "saved " << words[1] << "\n";
  }

  void history() {
    for (std::size_t i = 0; i < history_.size(); ++i)
      io_.out << fmt::format("{:>4}  {}\n", i + 1, history_[i]);
  }

  Session& session_;
  Io& io_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> history_;
  int saved_ = 0;
};

}  // namespace

const std::vector<std::string>& shell_builtins() {
  static const std::vector<std::string> b = {"set", "last", "save", "history", "help", "quit", "exit"};
  return b;
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
