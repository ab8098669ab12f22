// The example outputs in README.md and docs/ are what this build prints for the recorded H200
// reports. Each example sits between
//
//   <!-- example: WHAT -->  ...  <!-- end example -->
//
// (HTML comments: GitHub shows neither), as a fenced block or as Markdown, and WHAT says how to
// make it again:
//
//   gpulab ARGS...      the command, run from the repository root (no GPU: diagnose --report,
//                       compare, list, selftest --reports, ...)
//   run of FILE         what `gpulab run` printed for the lab run saved in FILE
//   run --all of DIR    the summary `gpulab run --all` printed for the reports saved in DIR
//   calibration of DIR  the estimated gains' calibration table over the reports saved in DIR
//
// GPULAB_UPDATE_EXAMPLES=1 writes the outputs of this build into the files instead of comparing.
#include <gtest/gtest.h>

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
std::vector<Example> examples_of(const std::string& text) {
  std::vector<Example> out;
  for (std::size_t at = text.find(kOpen); at != std::string::npos; at = text.find(kOpen, at + 1)) {
    Example e;
    const auto what_end = text.find(" -->", at);
    e.what = text.substr(at + kOpen.size(), what_end - at - kOpen.size());
    const auto close = text.find(kClose, what_end);
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
  }
  EXPECT_GE(count, 7) << "README.md's examples";
}

}  // namespace
}  // namespace gpulab::app
