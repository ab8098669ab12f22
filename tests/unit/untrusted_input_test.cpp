// Reports are files anyone can write. A report whose strings carry terminal control sequences,
// HTML or enormous names must print harmlessly in every text form (text, Markdown, CSV,
// compare); a report that is malformed in any way, or endless, is a one-line exit-2 error.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/base/errors.hpp"
#include "reports/base/input_file.hpp"
#include "reports/render/escape.hpp"
#include "reports/render/render_csv.hpp"
#include "reports/render/render_text.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "unit/run_cli.hpp"
#include "unit/temp_folder.hpp"

namespace gpulab::report {
namespace {

using test::run_cli;

const std::string kFixture = std::string(GPULAB_FIXTURES_DIR) + "/transpose_h200.json";

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/gpulab_untrusted_" + std::to_string(::getpid()) + "_" + name;
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// ESC [31m (color), OSC 0 (window title, BEL-terminated), CSI as the C1 byte U+009B, a
// carriage return that would overwrite the line, a right-to-left override, and HTML.
const std::string kHostile =
    "red\x1b[31m\x1b]0;owned\x07\xc2\x9b"
    "2J\rfake\xe2\x80\xae<script>alert(1)</script>*x*";
const std::string kLong(20000, 'k');

// The fixture, with hostile strings wherever a report carries text.
std::string hostile_report() {
  auto doc = nlohmann::json::parse(read_file(kFixture));
  doc["lab"]["name"] = kHostile;
  doc["lab"]["summary"] = kHostile;
  doc["device"]["name"] = kHostile;
  doc["warnings"] = {kHostile};
  for (auto& v : doc["variants"]) {
    v["name"] = v["name"].get<std::string>() + kHostile;
    v["check"]["message"] = kHostile;
    v["counters"]["note"] = kHostile;
    for (auto& k : v["kernels"]) {
      k["name"] = k["name"].get<std::string>() + kHostile + kLong;
      k["function"] = kHostile;
      k["metrics"][kHostile] = 1.0;
    }
  }
  doc["variants"][1]["check"]["status"] = "failed";
  return doc.dump();
}

// No raw control character but the newline that ends lines: no C0, DEL, C1 or bidi override.
void expect_no_controls(const std::string& text, const std::string& what) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    ASSERT_FALSE((c < 0x20 && c != '\n') || c == 0x7F)
        << what << ": byte " << int(c) << " at " << i;
    if (c == 0xC2 && i + 1 < text.size()) {
      const auto next = static_cast<unsigned char>(text[i + 1]);
      ASSERT_FALSE(next >= 0x80 && next <= 0x9F) << what << ": a C1 control at " << i;
    }
    ASSERT_NE(text.compare(i, 3, "\xe2\x80\xae"), 0) << what << ": a bidi override at " << i;
  }
}

TEST(Escape, TerminalSafe) {
  EXPECT_EQ(terminal_safe("a\x1b[31mb"), "a\\x1b[31mb");
  EXPECT_EQ(terminal_safe("tab\there\nand\x7f"), "tab\\x09here\\x0aand\\x7f");
  EXPECT_EQ(terminal_safe("\xc2\x9b"
                          "2J"),
            "\\u009b2J");
  EXPECT_EQ(terminal_safe("\xe2\x80\xae"), "\\u202e");
  EXPECT_EQ(terminal_safe("\xff\xc3"), "\\xff\\xc3") << "bytes that are not UTF-8";
  EXPECT_EQ(terminal_safe("148 µs · a → b"), "148 µs · a → b") << "text is kept";
}

TEST(Escape, MarkdownSafe) {
  EXPECT_EQ(markdown_safe("<script>&"), "&lt;script&gt;&amp;");
  EXPECT_EQ(markdown_safe("a_b*c*[d](e)`f`#"), "a\\_b\\*c\\*\\[d\\](e)\\`f\\`\\#");
  EXPECT_EQ(markdown_safe("\x1b[1m"), "\\\\x1b\\[1m") << "terminal-safe first";
  EXPECT_EQ(markdown_code_block("a ``` b"), "````\na ``` b\n````\n") << "the fence outgrows it";
  EXPECT_EQ(shown("<b>", Style{}), "<b>");
  EXPECT_EQ(shown("<b>", Style{TableStyle::markdown, false}), "&lt;b&gt;");
}

TEST(UntrustedReport, EveryTextFormEscapesControlsAndMarkup) {
  const std::string path = write("hostile.json", hostile_report());
  const Report r = load_report(path);
  expect_no_controls(render_text(r), "render_text");
  expect_no_controls(report_csv(r), "report_csv");

  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"diagnose", "--report", path},
        {"diagnose", "--report", path, "--format", "markdown"},
        {"diagnose", "--report", path, "--format", "csv"},
        {"compare", path, path},
        {"compare", path, path, "--format", "markdown"},
        {"compare", path, path, "--format", "csv"},
        {"compare", path, kFixture},
        {"compare", path, path, kFixture}}) {
    std::string what;
    for (const auto& a : args) what += a + " ";
    const auto out = run_cli(args);
    // diagnose exits 4: the report carries a failed check (to print its message). Compare
    // refuses reports of two labs (exit 2), in an error line that quotes the hostile lab name.
    const bool two_labs = std::find(args.begin(), args.end(), kFixture) != args.end();
    EXPECT_EQ(out.code, args[0] == "diagnose" ? 4 : (two_labs ? 2 : 0)) << what << out.err;
    expect_no_controls(out.out, what + "(stdout)");
    expect_no_controls(out.err, what + "(stderr)");
    if (args.back() == "markdown") EXPECT_EQ(out.out.find("<script>"), std::string::npos) << what;
  }
  const auto markdown = run_cli({"compare", path, path, "--format", "markdown"});
  EXPECT_NE(markdown.out.find("&lt;script&gt;alert(1)&lt;/script&gt;\\*x\\*"), std::string::npos)
      << markdown.out.substr(0, 2000);
  const auto diagnosis = run_cli({"diagnose", "--report", path, "--format", "markdown"});
  EXPECT_NE(diagnosis.out.find("### red\\\\x1b\\[31m"), std::string::npos)
      << "the heading is escaped: " << diagnosis.out.substr(0, 600);
  EXPECT_NE(diagnosis.out.find(kLong), std::string::npos) << "a long name prints whole";
  std::remove(path.c_str());
}

TEST(UntrustedReport, ErrorsQuotingReportTextAreEscapedToo) {
  auto doc = nlohmann::json::parse(read_file(kFixture));
  doc["variants"][0]["role"] = "\x1b]0;owned\x07";
  const std::string path = write("bad_role.json", doc.dump());
  const auto r = run_cli({"diagnose", "--report", path});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("variants[0].role: '\\x1b]0;owned\\x07' is not one of"), std::string::npos)
      << r.err;
  expect_no_controls(r.err, "stderr");
  std::remove(path.c_str());
}

// A malformed report: exit 2, one line naming the file and the problem, never "internal error".
void expect_malformed(const std::string& path, const std::string& problem) {
  const auto r = run_cli({"diagnose", "--report", path});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(problem), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(UntrustedReport, ANumberTooLargeForADoubleIsMalformedInput) {
  std::string text = read_file(kFixture);
  const auto at = text.find("\"median\":");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + 9, " 1e999, \"ignored\":");
  const std::string path = write("overflow.json", text);
  expect_malformed(path, "number overflow");
  std::remove(path.c_str());
}

TEST(UntrustedReport, AnEndlessInputFailsAtTheSizeBound) {
  expect_malformed("/dev/zero", "it is a device, not a file");
  const std::string path = write("small.json", std::string(4096, ' '));
  try {
    read_file(path, 1024);
    ADD_FAILURE() << "no error over the bound";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("more than"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_file(path, 4096).size(), 4096u) << "up to the bound is fine";
  std::remove(path.c_str());
}

// The fixture as JSON, changed by `edit`, written into `folder` as `name`.
template <typename Edit>
std::string edited_fixture(const test::TempFolder& folder, const std::string& name, Edit edit) {
  auto doc = nlohmann::json::parse(read_file(kFixture));
  edit(doc);
  const std::string path = folder / name;
  std::ofstream(path) << doc.dump();
  return path;
}

long peak_rss_kib() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// Deep nesting is refused before a parser allocates for it: a parser's memory grows with the
// depth, gigabytes for a 64 MiB file of '['.
TEST(UntrustedReport, NestingDeeperThanTheLimitIsRefusedBeforeMemoryGrows) {
  test::TempFolder folder;
  const std::string path = folder / "nested.json";
  std::ofstream(path) << std::string(32u << 20, '[');
  const long before = peak_rss_kib();
  expect_malformed(path, "JSON nested deeper than 64 levels (at byte 64)");
  EXPECT_LT(peak_rss_kib() - before, 200 * 1024) << "KiB of peak memory grown";
  // Brackets inside strings are text, not nesting.
  const std::string quoted = edited_fixture(folder, "quoted.json", [](nlohmann::json& doc) {
    doc["lab"]["summary"] = std::string(1000, '[') + "\"{";
  });
  EXPECT_EQ(run_cli({"diagnose", "--report", quoted}).code, 0);
}

// Past what a parser's memory should grow with, an input is refused by one pass over its text,
// naming the limit and where it was passed: values, object members, the longest string, depth.
TEST(UntrustedReport, ValuesMembersStringsAndDepthPastTheLimitsAreRefused) {
  const JsonLimits small{4, 10, 3, 32};
  const auto refused = [&](const std::string& text, const std::string& says) {
    try {
      check_json_shape(text, "'t.json'", small);
      ADD_FAILURE() << "no error: " << text;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("'t.json': " + says), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("the most gpulab reads"), std::string::npos);
    }
  };
  // The array and its elements: 11 values.
  refused("[1,2,3,4,5,6,7,8,9,10]", "more than 10 JSON values (at byte 18)");
  refused(R"({"a":1,"b":2,"c":3,"d":4})", "more than 3 object members (at byte 22)");
  refused(R"(["short", "a string that is longer than 32 bytes"])",
          "a string longer than 32 bytes (at byte 10)");
  refused("[[[[[1]]]]]", "JSON nested deeper than 4 levels (at byte 4)");
  // Up to each limit is fine, and what is inside a string is text.
  check_json_shape("[1,2,3,4,5,6,7,8,9]", "'t.json'", small);
  check_json_shape(R"({"a":"{[[[[[,,,,,,,,,,:::\"x"})", "'t.json'", small);
  const JsonLimits defaults;
  EXPECT_EQ(defaults.values, 32'000'000u);
  EXPECT_EQ(defaults.depth, 64);
}

// What a report cannot hold: negative durations, byte counts or grids, and two variants of one
// name. Each is one line naming where in the JSON it is.
TEST(UntrustedReport, ValuesThatCannotBeAreRefusedNamingTheirPlace) {
  test::TempFolder folder;
  struct Case {
    std::string name, says;
    void (*edit)(nlohmann::json&);
  };
  const Case cases[] = {
      {"median", "variants[1].timing.median: negative",
       [](nlohmann::json& d) { d["variants"][1]["timing"]["median"] = -1e-3; }},
      {"sample", "variants[0].timing.samples[2]: negative",
       [](nlohmann::json& d) { d["variants"][0]["timing"]["samples"][2] = -1; }},
      {"bytes", "work.bytes_read: negative",
       [](nlohmann::json& d) { d["work"]["bytes_read"] = -4096; }},
      {"grid", "variants[0].kernels[0].attributes.grid_blocks: negative",
       [](nlohmann::json& d) { d["variants"][0]["kernels"][0]["attributes"]["grid_blocks"] = -8; }},
      {"duplicate", "variants[2].name: 'naive' names an earlier variant too",
       [](nlohmann::json& d) { d["variants"][2]["name"] = "naive"; }},
  };
  for (const auto& c : cases) {
    const std::string path = edited_fixture(folder, c.name + ".json", c.edit);
    expect_malformed(path, c.says);
  }
}

// A ratio or percentage of a denormal, or one that overflows, prints as missing: never "+inf%"
// nor "9.84e-312x".
TEST(UntrustedReport, RatiosOfDenormalsAndOverflowsPrintAsMissing) {
  test::TempFolder folder;
  const std::string tiny = edited_fixture(folder, "tiny.json", [](nlohmann::json& d) {
    for (auto& v : d["variants"]) {
      v["timing"] = {{"median", 5e-324}, {"warmup", 1}, {"repeat", 1}};
      v["speedup"] = 9.84e-312;
    }
  });
  const std::string huge = edited_fixture(folder, "huge.json", [](nlohmann::json& d) {
    for (auto& v : d["variants"]) v["timing"] = {{"median", 1e300}, {"warmup", 1}, {"repeat", 1}};
  });
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"compare", tiny, huge},
                                             {"compare", huge, tiny},
                                             {"diagnose", "--report", tiny},
                                             {"compare", tiny, huge, "--format", "markdown"}}) {
    const auto r = run_cli(args);
    EXPECT_LT(r.code, 3) << r.err;
    EXPECT_EQ(r.out.find("inf"), std::string::npos) << args[0] << ":\n" << r.out;
    EXPECT_EQ(r.out.find("nan"), std::string::npos) << args[0] << ":\n" << r.out;
    EXPECT_FALSE(std::regex_search(r.out, std::regex("e-[0-9]+ ?[x%]")))
        << "a denormal ratio or percentage in " << args[0] << ":\n"
        << r.out;
  }
  EXPECT_NE(run_cli({"compare", tiny, huge}).out.find("n/a"), std::string::npos);
}

// A chart's axis ends for any value: a work model of 1e-320 FLOP (a denormal intensity), FLOP and
// bytes at the top of the double range.
TEST(UntrustedReport, ChartsEndForDenormalAndHugeValues) {
  test::TempFolder folder;
  for (const double flops : {1e-320, 1e308}) {
    const std::string path = edited_fixture(folder, "flops.json",
                                            [&](nlohmann::json& d) { d["work"]["flops"] = flops; });
    const auto r = run_cli({"report", path, "-o", folder / "page.html"});
    EXPECT_EQ(r.code, 0) << flops << ": " << r.err;
    const std::string page = read_file(folder / "page.html");
    EXPECT_LT(page.size(), 4u << 20) << flops;
    EXPECT_EQ(page.find(">inf<"), std::string::npos) << flops;
  }
}

// Text from a report that a spreadsheet would run as a formula is defused (OWASP: a leading '
// inside quotes); gpulab's own numbers, negative ones included, are left as they are.
TEST(UntrustedReport, CsvCellsThatLookLikeFormulasAreDefused) {
  EXPECT_EQ(csv_line({"=HYPERLINK(\"http://x\")", "+1+2", "-2+3", "@SUM(A1)", "\tx", "-0.25",
                      "1e-05", "plain"}),
            "\"'=HYPERLINK(\"\"http://x\"\")\",\"'+1+2\",\"'-2+3\",\"'@SUM(A1)\",\"'\\x09x\","
            "-0.25,1e-05,plain\n");
  test::TempFolder folder;
  const std::string path = edited_fixture(folder, "formula.json", [](nlohmann::json& d) {
    d["variants"][0]["name"] = "=cmd|' /C calc'!A0";
  });
  const auto r = run_cli({"diagnose", "--report", path, "--format", "csv"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(",\"'=cmd|' /C calc'!A0\","), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(",=cmd"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gpulab::report
