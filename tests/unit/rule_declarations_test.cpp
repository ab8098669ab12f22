// A rule is declared in one place (reports/diagnosis/rules/): the catalogues hold each threshold
// and finding once, every quantity a diagnosis shows has a declared unit, and no source outside a
// rule's file names its finding.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/base/input_file.hpp"
#include "reports/derived.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/diagnosis/diagnosis_walk.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "reports/timeline.hpp"
#include "unit/run_cli.hpp"

namespace gpulab::report {
namespace {

namespace fs = std::filesystem;

// The quantities the walks and their rules declare, each once and none a catalogue metric.
std::set<std::string> declared_quantities() {
  std::set<std::string> out;
  std::set<const walk::Rule*> seen;
  for (const walk::Walk* w : {&walk::kernel_walk(), &walk::timeline_walk()}) {
    std::vector<walk::Quantity> all = w->quantities;
    for (const walk::Rule* rule : w->rules)
      if (seen.insert(rule).second)
        all.insert(all.end(), rule->quantities.begin(), rule->quantities.end());
    for (const auto& q : all) {
      EXPECT_TRUE(out.insert(q.name).second) << q.name << " declared twice";
      EXPECT_EQ(metrics::find(q.name), nullptr) << q.name << " is a catalogue metric";
      EXPECT_EQ(find_derived(q.name), nullptr) << q.name << " is a derived metric";
    }
  }
  return out;
}

TEST(RuleDeclarations, EachThresholdFindingAndRuleOnce) {
  std::set<std::string> thresholds, findings, rules;
  for (const auto& t : threshold_catalogue())
    EXPECT_TRUE(thresholds.insert(t.name).second) << t.name << " declared twice";
  for (const auto& f : finding_catalogue())
    EXPECT_TRUE(findings.insert(f.id).second) << f.id << " listed twice";
  for (const walk::Walk* w : {&walk::kernel_walk(), &walk::timeline_walk()})
    for (const walk::Rule* rule : w->rules) {
      EXPECT_TRUE(rules.insert(rule->id).second) << rule->id << " in two walks";
      EXPECT_TRUE(findings.count(rule->finding.id)) << rule->id;
      EXPECT_TRUE(rule->check) << rule->id << " has no check";
    }
  EXPECT_EQ(rules.size(), 18u);
  EXPECT_EQ(findings.size(), 17u);  // launch overhead: a short kernel, or gaps between short ones
  EXPECT_GE(thresholds.size(), 29u);
}

// Every name on a diagnosis of the lab fixtures (kernels and timelines) is a catalogue metric, a
// timeline figure or a declared quantity, and every threshold it is held against is declared;
// every declared quantity appears somewhere.
TEST(RuleDeclarations, EveryEvidenceNameHasADeclaredUnit) {
  const auto quantities = declared_quantities();
  std::set<std::string> met;
  int evidence = 0;
  for (const auto& file : fs::directory_iterator(std::string(GPULAB_FIXTURES_DIR) + "/labs")) {
    if (file.path().extension() != ".json") continue;
    Report report = load_report(file.path().string());
    diagnose_report(report, Thresholds());
    for (const auto& v : report.variants) {
      std::vector<const Diagnosis*> diagnoses;
      for (const auto& k : v.kernels)
        if (k.diagnosis) diagnoses.push_back(&*k.diagnosis);
      if (v.timeline && v.timeline->diagnosis) diagnoses.push_back(&*v.timeline->diagnosis);
      for (const Diagnosis* d : diagnoses)
        for (const auto& step : d->path)
          for (const auto& e : step.evidence) {
            ++evidence;
            met.insert(e.metric);
            const bool known = metrics::find(e.metric) || find_derived(e.metric) ||
                               find_timeline_figure(e.metric) || quantities.count(e.metric);
            EXPECT_TRUE(known) << file.path().filename() << " " << step.node << ": " << e.metric
                               << " has no declared unit";
            if (!e.threshold.empty())
              EXPECT_TRUE(
                  std::any_of(threshold_catalogue().begin(), threshold_catalogue().end(),
                              [&](const ThresholdTraits& t) { return e.threshold == t.name; }))
                  << step.node << ": " << e.threshold;
          }
    }
  }
  EXPECT_GT(evidence, 1000) << "the fixtures were found";
  for (const auto& q : quantities) EXPECT_TRUE(met.count(q)) << q << " is declared but never shown";
}

// The code of `text`: each line up to a `//` comment.
std::string without_comments(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) out += line.substr(0, line.find("//")) + "\n";
  return out;
}

// Only a rule's file names its finding: the walks, the ranking and the catalogues read the
// declarations. Two finding ids are also verdict names (a branch's verdict is latency-bound or
// compute-bound), which the tree's branches set.
TEST(RuleDeclarations, OnlyARulesFileNamesItsFinding) {
  const std::set<std::string> verdicts = {"latency-bound", "compute-bound"};
  const fs::path root = GPULAB_SOURCE_DIR;
  int files = 0;
  for (const char* top : {"reports", "app"})
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
      const std::string file = fs::relative(entry.path(), root).string();
      if (file.rfind("reports/diagnosis/rules/", 0) == 0) continue;
      ++files;
      std::ifstream in(entry.path());
      const std::string code = without_comments(
          std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
      for (const auto& f : finding_catalogue()) {
        const std::string literal = std::string("\"") + f.id + "\"";
        if (code.find(literal) == std::string::npos) continue;
        if (verdicts.count(f.id) && file == "reports/diagnosis/decision_tree.cpp") continue;
        ADD_FAILURE() << file << " names the finding " << f.id;
      }
    }
  EXPECT_GT(files, 50) << "the sources were found";
}

// `gpulab list --rules`: every rule of both walks with what it declares, and every threshold with
// the rule that declares it, in each format.
TEST(RuleDeclarations, ListRulesShowsEachRuleAndThreshold) {
  const auto r = test::run_cli({"list", "--rules", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto listing = nlohmann::json::parse(r.out);
  ASSERT_EQ(listing.at("rules").size(), all_rules().size());
  std::map<std::string, nlohmann::json> rules;
  for (const auto& rule : listing.at("rules")) rules[rule.at("rule")] = rule;
  EXPECT_EQ(rules.at("sync").at("walk"), "kernel");
  EXPECT_EQ(rules.at("sync").at("branches"), (std::vector<std::string>{"compute", "neither"}));
  EXPECT_EQ(rules.at("sync").at("thresholds"), std::vector<std::string>{"sync.barrier_share"});
  EXPECT_EQ(rules.at("sync").at("needs").size(), 2u);
  EXPECT_EQ(rules.at("launch-gaps").at("walk"), "timeline");
  EXPECT_EQ(rules.at("launch-gaps").at("finding"), "launch-overhead");
  ASSERT_EQ(listing.at("thresholds").size(), threshold_catalogue().size());
  for (const auto& t : listing.at("thresholds")) {
    const std::string name = t.at("name");
    if (name.rfind("diagnosis.", 0) == 0 || name.rfind("memory_bound.", 0) == 0)
      EXPECT_TRUE(t.at("rule").is_null()) << name << ": the kernel walk's own";
  }
  EXPECT_EQ(listing.at("thresholds").at(7).at("rule"), "coalescing");

  const auto text = test::run_cli({"list", "--rules"});
  EXPECT_NE(text.out.find("launch-gaps   timeline  Does the GPU idle"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("stall_barrier, warp_latency"), std::string::npos) << "short names";
  const auto markdown = test::run_cli({"list", "--rules", "--format", "markdown"});
  EXPECT_NE(markdown.out.find("| sync | kernel | compute, neither | Do warps wait at barriers? | "
                              "sync-overhead | sync.barrier_share | stall_barrier, warp_latency |"),
            std::string::npos)
      << markdown.out;
  const auto csv = test::run_cli({"list", "--rules", "--format", "csv"});
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'),
            static_cast<long>(all_rules().size()) + 1);
  EXPECT_EQ(test::run_cli({"list", "--rules", "--metrics"}).code, 2);
}

// docs/adding-a-rule.md against the code: it names every member of Rule and every Rank, every
// source file it names exists, and every test suite it names is one of this binary's.
TEST(RuleDeclarations, TheAddingARulePageNamesWhatARuleDeclares) {
  const fs::path root = GPULAB_SOURCE_DIR;
  const std::string page = read_file((root / "docs" / "adding-a-rule.md").string());
  const std::string header = read_file((root / "reports/diagnosis/rules/rule.hpp").string());

  const auto block = [&](const std::string& opening) {
    const auto at = header.find(opening);
    EXPECT_NE(at, std::string::npos) << opening;
    return at == std::string::npos ? "" : header.substr(at, header.find("\n};", at) - at);
  };
  const std::string rule = block("struct Rule {");
  static const std::regex member(R"re(\n  [A-Za-z_:<>*&(), ]+ \*?([a-z_]+)( = [^;]*)?;)re");
  int members = 0;
  for (std::sregex_iterator it(rule.begin(), rule.end(), member), end; it != end; ++it, ++members)
    EXPECT_NE(page.find("`" + (*it)[1].str() + "`"), std::string::npos)
        << "the page does not name Rule::" << (*it)[1];
  EXPECT_EQ(members, 14) << rule;
  const std::string ranks = block("enum class Rank {");
  static const std::regex enumerator(R"re(\n  ([a-z_]+),)re");
  int count = 0;
  for (std::sregex_iterator it(ranks.begin(), ranks.end(), enumerator), end; it != end;
       ++it, ++count)
    EXPECT_NE(page.find("`" + (*it)[1].str() + "`"), std::string::npos) << (*it)[1];
  EXPECT_EQ(count, 4);

  static const std::regex file(R"re(`((reports|tests)/[A-Za-z0-9_/.]+\.(cpp|hpp))`)re");
  int files = 0;
  for (std::sregex_iterator it(page.begin(), page.end(), file), end; it != end; ++it, ++files)
    EXPECT_TRUE(fs::exists(root / (*it)[1].str())) << (*it)[1] << " does not exist";
  EXPECT_GE(files, 5);

  std::set<std::string> suites;
  const auto& unit = *::testing::UnitTest::GetInstance();
  for (int i = 0; i < unit.total_test_suite_count(); ++i)
    suites.insert(unit.GetTestSuite(i)->name());
  static const std::regex suite(R"re(`([A-Z][A-Za-z]*(/[A-Z][A-Za-z]*)?)\.(\*|[A-Za-z]+)`)re");
  int named = 0;
  for (std::sregex_iterator it(page.begin(), page.end(), suite), end; it != end; ++it, ++named)
    EXPECT_TRUE(suites.count((*it)[1].str())) << (*it)[1] << " is no test suite";
  EXPECT_GE(named, 6);
}

}  // namespace
}  // namespace gpulab::report
