// The example outputs in README.md and docs/ are what this build prints for the recorded H200
// reports. Each example sits between
//
//   <!-- example: WHAT -->  ...  <!-- end example -->
//
// (HTML comments: GitHub shows neither), as a fenced block or as Markdown, and WHAT says how to
// make it again. An excerpt, between `<!-- excerpt: WHAT -->` and `<!-- end excerpt -->`, shows
// some of the output's lines: each must be a line of it, in its order, and a line `...` stands
// for the lines left out. GPULAB_UPDATE_EXAMPLES leaves excerpts as they are: a stale one fails
// until it is cut again.
//
//
//   gpulab ARGS...      the command, run from the repository root (no GPU: diagnose --report,
//                       compare, list, selftest --reports, ...)
//   run of FILE         what `gpulab run` printed for the lab run saved in FILE
//   run --all of DIR    the summary `gpulab run --all` printed for the reports saved in DIR
//   calibration of DIR  the estimated gains' calibration table over the reports saved in DIR
//
// GPULAB_UPDATE_EXAMPLES=1 writes the outputs of this build into the files instead of comparing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/commands.hpp"
#include "labs/harness/registry.hpp"
#include "reports/base/input_file.hpp"
#include "reports/diagnosis/estimates.hpp"
#include "reports/render/render_text.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "run_cli.hpp"

namespace gpulab::app {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = GPULAB_SOURCE_DIR;
const std::string kOpen = "<!-- example: ";
const std::string kClose = "<!-- end example -->";
const std::string kExcerptOpen = "<!-- excerpt: ";
const std::string kExcerptClose = "<!-- end excerpt -->";

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The reports of DIR in the registry's order (the order `run --all` runs the labs in).
std::vector<report::Report> lab_reports(const std::string& dir) {
  std::vector<report::Report> out;
  for (const auto* lab : labs::all_labs()) {
    const fs::path file = kRoot / dir / (lab->spec().name + ".json");
    if (!fs::exists(file)) continue;
    out.push_back(report::load_report(file.string()));
  }
  return out;
}

// What the example `what` shows, as this build prints it.
std::string output_of(const std::string& what) {
  const auto w = words(what);
  if (w.size() >= 2 && w[0] == "gpulab") {
    const auto previous = fs::current_path();
    fs::current_path(kRoot);  // the paths in the example are the repository's
    const auto r = test::run_cli({w.begin() + 1, w.end()});
    fs::current_path(previous);
    EXPECT_EQ(r.err, "") << what;
    return r.out;
  }
  if (w.size() == 3 && w[0] == "run" && w[1] == "of")
    return report::render_text(report::load_report((kRoot / w[2]).string()), report::Style());
  if (w.size() == 4 && w[0] == "run" && w[1] == "--all" && w[2] == "of")
    return all_labs_summary(lab_reports(w[3]), report::Style());
  if (w.size() == 3 && w[0] == "calibration" && w[1] == "of") {
    auto reports = lab_reports(w[2]);
    for (auto& r : reports) diagnose_into(r, report::Thresholds());
    return estimates_calibration(reports);
  }
  ADD_FAILURE() << "an example of unknown kind: " << what;
  return "";
}

struct Example {
  std::string what;
  std::size_t begin, end;  // the shown output: [begin, end) of the file's text
  std::string shown;
};

// The examples of a page. The shown output is the inside of the fenced block between the
// markers, or the Markdown between them, without the blank lines around it.
std::vector<Example> examples_of(const std::string& text, const std::string& open = kOpen,
                                 const std::string& end = kClose) {
  std::vector<Example> out;
  for (std::size_t at = text.find(open); at != std::string::npos; at = text.find(open, at + 1)) {
    Example e;
    const auto what_end = text.find(" -->", at);
    e.what = text.substr(at + open.size(), what_end - at - open.size());
    const auto close = text.find(end, what_end);
    if (close == std::string::npos) {
      ADD_FAILURE() << "no end of the example " << e.what;
      break;
    }
    e.begin = text.find('\n', what_end) + 1;
    e.end = close;
    while (e.begin < e.end && text[e.begin] == '\n') ++e.begin;
    if (text.compare(e.begin, 3, "```") == 0) {
      e.begin = text.find('\n', e.begin) + 1;
      e.end = text.rfind("```", close);
    } else {
      while (e.end > e.begin && text[e.end - 1] == '\n') --e.end;
      if (e.end > e.begin) ++e.end;  // keep the last line's newline (an empty example has none)
    }
    e.shown = text.substr(e.begin, e.end - e.begin);
    out.push_back(e);
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The first line of `shown` that is not a line of `printed` in order ('...' skips any); empty
// when every line is.
std::string first_line_not_printed(const std::string& shown, const std::string& printed) {
  const auto out = lines_of(printed);
  std::size_t next = 0;
  for (const auto& line : lines_of(shown)) {
    if (line == "...") continue;
    const auto at = std::find(out.begin() + static_cast<std::ptrdiff_t>(next), out.end(), line);
    if (at == out.end()) return line.empty() ? "(an empty line)" : line;
    next = static_cast<std::size_t>(at - out.begin()) + 1;
  }
  return "";
}

TEST(Docs, AnExcerptLineNotPrintedOrOutOfOrderIsFound) {
  const std::string printed = "a\nb\nc\nd\n";
  EXPECT_EQ(first_line_not_printed("a\n...\nc\nd\n", printed), "");
  EXPECT_EQ(first_line_not_printed("c\nb\n", printed), "b") << "out of order";
  EXPECT_EQ(first_line_not_printed("a\nb \n", printed), "b ") << "a line is matched whole";
}

TEST(Docs, ExamplesAreWhatThisBuildPrints) {
  const bool update = std::getenv("GPULAB_UPDATE_EXAMPLES") != nullptr;
  std::vector<fs::path> pages = {kRoot / "README.md"};
  for (const auto& entry : fs::directory_iterator(kRoot / "docs"))
    if (entry.path().extension() == ".md") pages.push_back(entry.path());
  int count = 0;
  for (const auto& page : pages) {
    std::string text = read_file(page.string());
    const auto examples = examples_of(text);
    for (auto it = examples.rbegin(); it != examples.rend(); ++it) {  // from the back: offsets hold
      ++count;
      const std::string printed = output_of(it->what);
      if (update) {
        text.replace(it->begin, it->end - it->begin, printed);
      } else {
        EXPECT_EQ(it->shown, printed)
            << page.filename().string() << ": the example `" << it->what
            << "` is not what this build prints (GPULAB_UPDATE_EXAMPLES=1 rewrites it)";
      }
    }
    if (update) std::ofstream(page, std::ios::binary) << text;
    for (const auto& e : examples_of(text, kExcerptOpen, kExcerptClose)) {
      ++count;
      EXPECT_EQ(first_line_not_printed(e.shown, output_of(e.what)), "")
          << page.filename().string() << ": the excerpt of `" << e.what
          << "` shows a line this build does not print (in that order)";
    }
  }
  EXPECT_GE(count, 7) << "README.md's examples";
}

}  // namespace
}  // namespace gpulab::app
