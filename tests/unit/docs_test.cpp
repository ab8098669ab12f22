// The docs stay true to the code: docs/metrics.md covers the metric catalogue, docs/diagnosis.md
// every finding and docs/thresholds.md every threshold's default and why it has it,
// docs/report-schema.md every field the report and comparison writers emit and every value of
// counters.metric_set.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "reports/base/input_file.hpp"
#include "reports/derived.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/metric_catalogue.hpp"
#include "run_cli.hpp"

namespace gpulab {
namespace {

std::string doc(const std::string& name) {
  return read_file(std::string(GPULAB_DOCS_DIR) + "/" + name);
}

// The words of a page's code spans (`roofs.copy_bandwidth` gives roofs and copy_bandwidth).
std::set<std::string> code_words(const std::string& page) {
  std::set<std::string> words;
  for (std::size_t open = page.find('`'); open != std::string::npos;) {
    const std::size_t close = page.find('`', open + 1);
    if (close == std::string::npos) break;
    std::string word;
    for (std::size_t i = open + 1; i <= close; ++i) {
      const char c = page[i];
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
        word += c;
      } else if (!word.empty()) {
        words.insert(word);
        word.clear();
      }
    }
    open = page.find('`', close + 1);
  }
  return words;
}

// Every key of a JSON document, outside the objects that map names to values (metrics,
// derived metrics, parameters, overridden thresholds), whose keys are data, not schema.
void collect_keys(const nlohmann::json& node, std::set<std::string>& keys) {
  static const std::set<std::string> maps = {"metrics", "derived", "params",
                                             "thresholds_overridden"};
  if (node.is_array()) {
    for (const auto& item : node) collect_keys(item, keys);
  } else if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      keys.insert(it.key());
      if (!maps.count(it.key())) collect_keys(it.value(), keys);
    }
  }
}

// Reports as this build writes them, diagnosed: every lab's H200 fixture and the first
// transpose report.
std::vector<nlohmann::json> written_reports() {
  std::vector<std::string> files = {std::string(GPULAB_FIXTURES_DIR) + "/transpose_h200.json"};
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(GPULAB_FIXTURES_DIR) + "/labs"))
    files.push_back(entry.path().string());
  std::vector<nlohmann::json> out;
  for (const auto& f : files) {
    const auto r = test::run_cli({"diagnose", "--report", f, "--format", "json"});
    EXPECT_EQ(r.code, 0) << f << ": " << r.err;
    out.push_back(nlohmann::json::parse(r.out));
  }
  return out;
}

TEST(Docs, ReportSchemaCoversEveryField) {
  const auto documented = code_words(doc("report-schema.md"));
  std::set<std::string> keys;
  for (const auto& report : written_reports()) collect_keys(report, keys);
  const std::string transpose = std::string(GPULAB_FIXTURES_DIR) + "/transpose_h200.json";
  const std::string streams = std::string(GPULAB_FIXTURES_DIR) + "/labs/streams.json";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"compare", transpose, "--variants", "naive,padded", "--format", "json"},
           {"compare", streams, "--variants", "serial-pageable,overlapped", "--format", "json"}}) {
    const auto r = test::run_cli(args);
    ASSERT_EQ(r.code, 0) << r.err;
    collect_keys(nlohmann::json::parse(r.out), keys);
  }
  EXPECT_GT(keys.size(), 100u);
  for (const auto& key : keys) EXPECT_TRUE(documented.count(key)) << "undocumented field: " << key;
}

// counters.metric_set holds the name of the set that was collected, or "custom" for a list of
// metric names (the set "none" collects nothing, and leaves it empty).
TEST(Docs, ReportSchemaListsEveryMetricSet) {
  const std::string page = doc("report-schema.md");
  const auto at = page.find("`metric_set` (");
  ASSERT_NE(at, std::string::npos);
  const std::string values = page.substr(at, page.find("), `passes`", at) - at);
  auto names = report::metrics::set_names();
  names.push_back("custom");
  for (const auto& name : names) {
    if (name == "none") continue;
    EXPECT_NE(values.find("`" + name + "`"), std::string::npos) << name << " in " << values;
  }
  std::set<std::string> recorded;
  for (const auto& report : written_reports())
    for (const auto& v : report["variants"]) recorded.insert(v["counters"]["metric_set"]);
  for (const auto& name : recorded)
    if (!name.empty())
      EXPECT_NE(values.find("`" + name + "`"), std::string::npos) << "a fixture holds " << name;
}

TEST(Docs, DiagnosisPagesCoverThresholdsAndFindings) {
  const std::string history = doc("thresholds.md");
  for (const auto& t : report::threshold_catalogue()) {
    // | `name` | default | why |, the default in the threshold's unit (10 µs is 10e-6 s).
    const std::string row = std::string("| `") + t.name + "` | ";
    const auto at = history.find(row);
    ASSERT_NE(at, std::string::npos) << "threshold " << t.name << " has no row in the table";
    const std::string cell =
        history.substr(at + row.size(), history.find(" |", at + row.size()) - (at + row.size()));
    std::size_t used = 0;
    double value = std::stod(cell, &used);
    if (cell.substr(used) == " µs")
      value *= 1e-6;
    else
      EXPECT_EQ(used, cell.size()) << t.name << ": " << cell;
    EXPECT_NEAR(value, t.default_value, 1e-12) << t.name << ": the table says " << cell;
  }
  const std::string page = doc("diagnosis.md");
  for (const auto& f : report::finding_catalogue())
    EXPECT_NE(page.find(std::string("`") + f.id + "`"), std::string::npos) << "finding " << f.id;
}

TEST(Docs, MetricsPageCoversTheCatalogue) {
  const std::string page = read_file(std::string(GPULAB_DOCS_DIR) + "/metrics.md");
  const std::string stall_prefix = "smsp__average_warps_issue_stalled_";
  for (const auto& m : report::metrics::catalogue()) {
    EXPECT_NE(page.find(std::string("`") + m.short_name + "`"), std::string::npos) << m.short_name;
    // Stall reasons are documented by their reason; their full names follow one pattern.
    const std::string name = m.name;
    if (name.rfind(stall_prefix, 0) == 0) {
      const std::string reason = name.substr(stall_prefix.size(),
                                             name.find("_per_issue_active") - stall_prefix.size());
      EXPECT_EQ(std::string(m.short_name), "stall_" + reason) << name;
    } else {
      EXPECT_NE(page.find("`" + name + "`"), std::string::npos) << name;
    }
  }
  for (const auto& d : report::derived_catalogue())
    EXPECT_NE(page.find(std::string("`") + d.name + "`"), std::string::npos) << d.name;
}

}  // namespace
}  // namespace gpulab
