#include "app/manual.hpp"

#include <cctype>
#include <cstring>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "app/option_checks.hpp"
#include "app/version.hpp"
#include "reports/base/errors.hpp"

namespace gpulab::app {
namespace {

// The subcommands --help lists (hidden ones have no group).
std::vector<const CLI::App*> visible_commands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); });
}

// `text` broken into lines of at most `width` characters, each after `indent`.
std::string wrapped(const std::string& text, std::size_t indent, std::size_t width) {
  std::istringstream words(text);
  std::string out, line;
  for (std::string w; words >> w;) {
    if (!line.empty() && indent + line.size() + 1 + w.size() > width) {
      out += std::string(indent, ' ') + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + w;
  }
  if (!line.empty()) out += std::string(indent, ' ') + line + "\n";
  return out;
}

// ---- roff ------------------------------------------------------------------------------------

// Text for a roff line: backslashes and minus signs escaped (so that options copy as typed),
// and a leading '.' or '\'' kept from being read as a request.
std::string roff(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

std::string upper(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

bool repeatable(const CLI::Option& opt) {
  return opt.get_expected_max() >= CLI::detail::expected_max_vector_size;
}

// "gpulab run [LAB] [OPTIONS]", from the command's positionals.
std::string synopsis(const CLI::App& cmd) {
  std::string out = "\\fBgpulab " + roff(cmd.get_name()) + "\\fR";
  for (const auto* opt :
       cmd.get_options([](const CLI::Option* o) { return !o->nonpositional(); })) {
    std::string name = "\\fI" + roff(upper(opt->get_name(true))) + "\\fR";
    if (repeatable(*opt)) name += "...";
    out += " " + (opt->get_required() ? name : "[" + name + "]");
  }
  return out + " [\\fIOPTIONS\\fR]";
}

// One option: its names and value as a tagged paragraph, its help text, the values it takes and
// its default.
std::string option_entry(const CLI::Option& opt) {
  std::string names;
  for (const auto& s : opt.get_snames())
    names += (names.empty() ? "" : ", ") + ("\\fB\\-" + roff(s) + "\\fR");
  for (const auto& l : opt.get_lnames())
    names += (names.empty() ? "" : ", ") + ("\\fB\\-\\-" + roff(l) + "\\fR");
  std::string body = opt.get_description();
  if (takes_value(opt)) {
    // CLI11's type name is "TYPE" or "TYPE:what the checks allow" ("TEXT:{text,json}").
    const std::string type = opt.get_type_name();
    const auto colon = type.find(':');
    names += " \\fI" + roff(type.substr(0, colon)) + "\\fR";
    if (repeatable(opt) && body.find("repeatable") == std::string::npos) body += " (repeatable)";
    if (colon != std::string::npos) {
      std::string values = type.substr(colon + 1);  // one_of's "{a,b}" reads "a, b"
      if (values.size() > 2 && values.front() == '{' && values.back() == '}') {
        values = values.substr(1, values.size() - 2);
        for (std::size_t i = 0; (i = values.find(',', i)) != std::string::npos; i += 2)
          values.insert(i + 1, " ");
      }
      body += fmt::format(". Values: {}", values);
    }
    if (!opt.get_default_str().empty()) body += fmt::format(". Default: {}", opt.get_default_str());
  }
  if (!body.empty() && body.back() != '.') body += ".";
  return ".TP\n" + names + "\n" + roff(body) + "\n";
}

std::string command_section(const CLI::App& cmd) {
  std::string out = ".SS \"" + roff("gpulab " + cmd.get_name()) + "\"\n";
  out += synopsis(cmd) + "\n.PP\n" + roff(cmd.get_description()) + ".\n";
  for (const auto* opt : cmd.get_options([](const CLI::Option* o) { return !o->nonpositional(); }))
    out += ".TP\n\\fI" + roff(upper(opt->get_name(true))) + "\\fR\n" +
           roff(opt->get_description()) + ".\n";
  for (const auto* opt : cmd.get_options([](const CLI::Option* o) { return o->nonpositional(); }))
    out += option_entry(*opt);
  bool any = false;
  for (const auto& e : examples()) {
    if (cmd.get_name() != e.command) continue;
    out += any ? "" : ".PP\nExamples:\n";
    any = true;
    out += ".TP\n\\fB" + roff(e.line) + "\\fR\n" + roff(e.what) + "\n";
  }
  return out;
}

}  // namespace

const std::vector<Example>& examples() {
  static const std::vector<Example> all = {
      {"list", "gpulab list", "the labs, their parameters and variants; no GPU needed"},
      {"list", "gpulab list --metrics",
       "the metric catalogue: CUPTI names, units, derived metrics"},
      {"list", "gpulab list --rules",
       "the diagnosis rules: what each asks, its finding, thresholds and needed counters"},
      {"list", "gpulab list --format csv", "the variants as CSV"},
      {"info", "gpulab info", "the GPU, its measured roofs, counter access"},
      {"info", "gpulab info --check-metrics full", "which metrics of the full set this GPU lacks"},
      {"run", "gpulab run transpose", "every variant of a lab: check, time, counters"},
      {"run", "gpulab run transpose --variant padded --size 4096 --json padded.json",
       "one variant at another size, the report also saved as JSON"},
      {"run", "gpulab run --all --diagnose --json-dir runs",
       "every lab, diagnosed, each report saved as runs/LAB.json"},
      {"sweep", "gpulab sweep vectorize --axis size=64Ki:512Mi:*2",
       "every variant's time and bandwidth from 64 Ki to 512 Mi elements, timed until quiet: "
       "the L2 cliff"},
      {"sweep",
       "gpulab sweep coalescing --axis stride=1:32:*2 --size 16777216 --diagnose --json "
       "stride.json",
       "the diagnosis at each stride, and where its principal finding changes"},
      {"diagnose", "gpulab diagnose transpose --variant tiled",
       "what limits a variant's kernels, and what to do"},
      {"diagnose", "gpulab diagnose --report padded.json",
       "the same from a saved report, offline: no GPU needed"},
      {"diagnose", "gpulab diagnose --list-thresholds",
       "the thresholds of the decision tree, their defaults and ranges"},
      {"compare", "gpulab compare before.json after.json --fail-on-regression 5",
       "deltas and findings resolved or introduced; exit 5 on a slowdown beyond 5% and noise"},
      {"compare", "gpulab compare t.json --variants naive,padded --format markdown",
       "two variants of one report, as Markdown"},
      {"report", "gpulab report runs/transpose.json runs/matmul.json -o report.html",
       "saved reports as one self-contained HTML page"},
      {"report", "gpulab report runs/streams.json --trace streams-trace.json",
       "a traced report's timelines for ui.perfetto.dev"},
      {"export", "gpulab export --sqlite runs.db runs/*.json",
       "saved reports into one SQLite database, to query with SQL (docs/export.md)"},
      {"export", "gpulab export --sqlite job.db --ranks train rank0.json rank1.json",
       "the reports of a job's ranks, keyed by rank"},
      {"source", "gpulab source --report naive.json --sass",
       "a kernel's source with its hot lines and their counters, each line's SASS under it"},
      {"profile", "gpulab profile -- ./my_app --size 4096",
       "any CUDA program: its kernels by function, the first 100 launches profiled; gpulab "
       "exits with the program's status"},
      {"profile",
       "gpulab profile --diagnose --kernel 'gemm|softmax' --json app.json -- python3 train.py",
       "the matching kernels diagnosed, the report saved"},
      {"profile", "gpulab profile --trace -- ./my_app",
       "the whole program's timeline instead: kernels, copies, migrations, no counters"},
      {"selftest", "gpulab selftest --labs transpose,reduction",
       "check each variant's principal finding against the lab's expectation"},
      {"shell", "gpulab shell", "the interactive session: the same commands, one GPU setup"},
  };
  return all;
}

std::string examples_text(const std::string& command) {
  std::string out;
  for (const auto& e : examples()) {
    if (!command.empty() && command != e.command) continue;
    out += fmt::format("  {}\n", e.line) + wrapped(e.what, 6, 100);
  }
  return out.empty() ? "" : "Examples:\n" + out;
}

std::string exit_codes_text() {
  std::string out = "Exit codes:\n";
  for (const auto& c : kExitCodes) {
    const std::string body = wrapped(c.meaning, 8, 100);
    out += fmt::format("  {:<5} {}", static_cast<int>(c.code), body.substr(8));
  }
  return out;
}

void add_manual_footers(CLI::App& app) {
  // The same texts for every command line, made once: a CommandLine is built for each command,
  // and the shell builds more for its completion and checks of what is typed.
  static const std::string root_text = [] {
    std::string first_examples = "Examples:\n";
    std::string seen;
    for (const auto& e : examples()) {
      if (seen == e.command) continue;
      seen = e.command;
      // The description beside a short command line, below a long one.
      first_examples += std::strlen(e.line) <= 44
                            ? fmt::format("  {:<44}  {}\n", e.line, e.what)
                            : fmt::format("  {}\n{:48}{}\n", e.line, "", e.what);
    }
    return "\n" + first_examples + "\n" + exit_codes_text() +
           "\nThe manual, man gpulab (or gpulab man | man -l -), has every command and option.\n";
  }();
  static const std::map<std::string, std::string> command_texts = [] {
    std::map<std::string, std::string> texts;  // the commands that have examples
    for (const auto& e : examples())
      if (!texts.count(e.command))
        texts[e.command] = examples_text(e.command) + "\nExit codes: gpulab --help lists them.\n";
    return texts;
  }();
  app.footer(app.get_footer() + root_text);
  for (auto* cmd : app.get_subcommands([](CLI::App* s) { return !s->get_group().empty(); })) {
    const auto text = command_texts.find(cmd->get_name());
    if (text != command_texts.end()) cmd->footer(text->second);
  }
}

std::string man_page(const CLI::App& app) {
  // A paragraph of running text: one roff line.
  const auto text = [](const char* words) { return roff(words) + "\n"; };
  std::string out;
  out += ".\\\" Generated by `gpulab man` from the command line's own definitions: do not edit.\n";
  out += fmt::format(".TH GPULAB 1 \"\" \"gpulab {}\" \"User Commands\"\n", kVersion);
  out += ".nh\n.ad l\n";  // no hyphens in option names, no stretched lines
  out += ".SH NAME\ngpulab \\- CUDA optimization labs measured with hardware counters\n";

  out += ".SH SYNOPSIS\n";
  for (const auto* cmd : visible_commands(app)) out += synopsis(*cmd) + "\n.br\n";
  out += "\\fBgpulab help\\fR [\\fICOMMAND\\fR]\n.br\n";
  out += "\\fBgpulab\\fR [\\fB\\-\\-help\\fR | \\fB\\-\\-version\\fR]\n";

  out += ".SH DESCRIPTION\n";
  out += text(
      "gpulab teaches and diagnoses GPU performance on real hardware. Each optimization topic is "
      "a lab: a baseline kernel and optimized variants that compute the same result. gpulab "
      "checks every variant against a CPU reference, times it with CUDA events, reads its "
      "hardware counters through CUPTI, walks a decision tree to say what limits each kernel "
      "and what to do, and writes reports (text, Markdown, CSV, versioned JSON, HTML) that can "
      "be compared.");
  out += ".PP\n";
  out += text(
      "list, compare, report, diagnose --report and --help need no GPU. gpulab alone on a "
      "terminal starts the shell.");
  out += ".PP\n";
  out += text(
      "The command line has one grammar. An option that takes a value takes the next word, or "
      "the text after '=' (--json=out.json). A value is never empty and never starts with '-' "
      "unless it is a number or '-' itself (standard output, or input for a report read): name "
      "a file that does ./-file. --json FILE also writes the JSON to FILE, whatever --format "
      "prints on stdout; a regular file is replaced atomically, a device or FIFO written in "
      "place. An option that does nothing for the command as given is refused.");

  out += ".SH COMMANDS\n";
  for (const auto* cmd : visible_commands(app)) out += command_section(*cmd);
  out += ".SS \"gpulab help\"\n\\fBgpulab help\\fR [\\fICOMMAND\\fR]\n.PP\n";
  out += text("The same as gpulab --help, or gpulab COMMAND --help.");

  out += ".SH OPTIONS\n";
  for (const auto* opt : app.get_options([](const CLI::Option* o) { return o->nonpositional(); }))
    out += option_entry(*opt);

  out += ".SH EXAMPLES\n";
  for (const auto& e : examples())
    out += ".TP\n\\fB" + roff(e.line) + "\\fR\n" + roff(e.what) + "\n";

  out += ".SH EXIT STATUS\n";
  for (const auto& c : kExitCodes)
    out += fmt::format(".TP\n\\fB{}\\fR\n{}\n", static_cast<int>(c.code), roff(c.meaning));
  out += ".PP\n";
  out += text(
      "Every error is one line on stderr, gpulab: error: ..., naming the problem. Output files "
      "are written whole or not at all. A script piped into gpulab shell exits with the status "
      "of its first line that failed.");

  out += ".SH ENVIRONMENT\n.TP\n.B NO_COLOR\n";
  out += text("When set and not empty: no colors in text output (used only on a terminal anyway).");
  out += ".TP\n.B XDG_STATE_HOME\n";
  out += text(
      "The shell keeps its history in $XDG_STATE_HOME/gpulab/history (default "
      "~/.local/state/gpulab/history).");
  out += ".TP\n.B GPULAB_CUPTI_LIBRARY, GPULAB_CUBLAS_LIBRARY\n";
  out += text(
      "A file to load CUPTI (libcupti.so.13) or cuBLAS (libcublas.so.13) from, a path or a name "
      "for the loader to find, instead of looking on the library path (LD_LIBRARY_PATH) and then "
      "in the CUDA toolkit's folder. gpulab loads them only for the commands that need them: "
      "run, diagnose LAB and selftest (README.md, \"What gpulab needs at run time\").");

  out += ".SH SEE ALSO\n";
  out += text(
      "ncu(1), nsys(1). README.md and docs/ in gpulab's documentation directory (share/doc/gpulab "
      "under the installation prefix): the measurement method, the metrics, the diagnosis and "
      "its thresholds, the report schema.");
  return out;
}

CLI::App* add_man(CLI::App& root) {
  auto* cmd = root.add_subcommand("man", "Print the manual page (roff), as installed as gpulab.1");
  cmd->group("");  // hidden from --help
  return cmd;
}

int run_man(const CLI::App& app, Io& io) {
  io.out << man_page(app);
  return static_cast<int>(ExitCode::ok);
}

}  // namespace gpulab::app
