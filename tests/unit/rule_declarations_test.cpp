// A rule is declared in one place (reports/diagnosis/rules/): the catalogues hold each threshold
// and finding once, every quantity a diagnosis shows has a declared unit, and no source outside a
// rule's file names its finding.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "reports/derived.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/diagnosis/diagnosis_walk.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "reports/timeline.hpp"

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

}  // namespace
}  // namespace gpulab::report
