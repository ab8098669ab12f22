// The counters each rule of the kernel tree declares it needs: that they are catalogue metrics,
// that they suffice for an answer on the labs' recorded kernels, and that a report without them
// names the rules it could not evaluate and the metric set that would measure them.
#include <algorithm>
#include <filesystem>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/derived.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "unit/run_cli.hpp"

namespace gpulab::report {
namespace {

namespace fs = std::filesystem;
namespace m = metrics::name;

const std::string kBasicTranspose = std::string(GPULAB_FIXTURES_DIR) + "/transpose_h200.json";

TEST(RuleNeeds, EveryRuleOnceWithCatalogueMetrics) {
  std::set<std::string> nodes;
  ASSERT_GE(kernel_rules().size(), 10u);
  for (const auto& rule : kernel_rules()) {
    EXPECT_TRUE(nodes.insert(rule.node).second) << rule.node << " listed twice";
    EXPECT_EQ(node_of_finding(rule.finding), rule.node);
    for (const auto& need : rule.needs)
      EXPECT_NE(metrics::find(need), nullptr) << rule.node << " needs " << need;
  }
}

// The answer of `node` in a diagnosis, or "" where the walk did not visit it.
std::string answer_of(const Diagnosis& d, const std::string& node) {
  for (const auto& step : d.path)
    if (step.node == node) return step.answer;
  return "";
}

// On every single-kernel variant of the H200 lab fixtures (the full set), a kernel left with
// only a rule's needs and the root's two throughputs still gets an answer from that rule.
TEST(RuleNeeds, TheNeedsSufficeForAnAnswer) {
  int checked = 0;
  for (const auto& file : fs::directory_iterator(std::string(GPULAB_FIXTURES_DIR) + "/labs")) {
    if (file.path().extension() != ".json") continue;
    Report report = load_report(file.path().string());
    for (auto& v : report.variants) {
      if (v.kernels.size() != 1 || v.kernels.front().metrics.empty()) continue;
      const Kernel& full = v.kernels.front();
      const WorkModel* model = &report.work_of(v);
      const Diagnosis whole =
          diagnose(KernelContext{&full, &v, model, &report.device, 1}, Thresholds());
      for (const auto& rule : kernel_rules()) {
        const std::string answered = answer_of(whole, rule.node);
        if (answered.empty() || answered == "not measured") continue;
        Kernel pruned = full;
        pruned.metrics.clear();
        for (const auto& name : rule.needs) pruned.metrics[name] = full.metrics.at(name);
        for (const char* root : {m::dram_pct, m::sm_pct})
          pruned.metrics[root] = full.metrics.at(root);
        pruned.derived = derive(pruned, model);
        const Diagnosis d =
            diagnose(KernelContext{&pruned, &v, model, &report.device, 1}, Thresholds());
        EXPECT_NE(answer_of(d, rule.node), "not measured")
            << file.path().filename() << " " << v.name << ": " << rule.node;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100) << "the fixtures were found";
}

TEST(RuleNeeds, ABasicReportNamesTheRulesItCouldNotEvaluate) {
  Report basic = load_report(kBasicTranspose);
  diagnose_report(basic, Thresholds());
  std::map<std::string, std::string> sets;
  for (const auto& r : rules_not_evaluated(basic)) sets[r.rule->node] = r.metric_set;
  const std::map<std::string, std::string> expected = {
      {"latency", "stalls"}, {"sync", "stalls"}, {"mio", "stalls"}, {"atomics", "full"}};
  EXPECT_EQ(sets, expected);

  Report full = load_report(std::string(GPULAB_FIXTURES_DIR) + "/labs/transpose.json");
  diagnose_report(full, Thresholds());
  EXPECT_TRUE(rules_not_evaluated(full).empty());
}

TEST(RuleNeeds, DiagnoseSaysWhichSetWouldMeasureThem) {
  const auto r = test::run_cli({"diagnose", "--report", kBasicTranspose});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("rules not evaluated for want of counters: mio, sync, latency (--metrics "
                       "stalls measures them); atomics (--metrics full measures them)\n"),
            std::string::npos)
      << r.out;
  // Once for the report, however many kernels lacked the counters.
  const auto first = r.out.find("rules not evaluated");
  EXPECT_EQ(r.out.find("rules not evaluated", first + 1), std::string::npos);
}

// The JSON says it too, node by node: a step "not measured" for want of counters names them.
TEST(RuleNeeds, TheJsonPathNamesTheCountersANodeLacked) {
  const auto r = test::run_cli({"diagnose", "--report", kBasicTranspose, "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  int steps = 0;
  for (const auto& v : json.at("variants"))
    for (const auto& k : v.at("kernels"))
      for (const auto& step : k.at("diagnosis").at("path")) {
        if (step.at("node") == "sync") {
          ++steps;
          EXPECT_EQ(step.at("answer"), "not measured");
          EXPECT_EQ(step.at("missing"),
                    (std::vector<std::string>{m::stall_barrier, m::warp_latency}));
        } else if (step.at("answer") != "not measured") {
          EXPECT_FALSE(step.contains("missing")) << step.at("node");
        }
      }
  EXPECT_GT(steps, 0) << "the basic report's kernels were walked past sync";
  // Read back, the report names the same rules.
  Report read = load_report(kBasicTranspose);
  diagnose_report(read, Thresholds());
  const Report again = from_json(nlohmann::json::parse(to_json(read).dump()));
  EXPECT_EQ(rules_not_evaluated(again).size(), rules_not_evaluated(read).size());
  EXPECT_FALSE(rules_not_evaluated(again).empty());
}

TEST(RuleNeeds, ListMetricsShowsTheRulesEachMetricFeeds) {
  const auto r = test::run_cli({"list", "--metrics", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto listing = nlohmann::json::parse(r.out);
  std::map<std::string, std::vector<std::string>> needed_by;
  for (const auto& metric : listing.at("metrics"))
    needed_by[metric.at("name")] = metric.at("needed_by").get<std::vector<std::string>>();
  EXPECT_EQ(needed_by.at(m::threads_per_inst), std::vector<std::string>{"divergence"});
  EXPECT_EQ(needed_by.at(m::stall_barrier), std::vector<std::string>{"sync"});
  const auto& dram = needed_by.at(m::dram_read);
  EXPECT_NE(std::find(dram.begin(), dram.end(), "dram-excess"), dram.end());
  EXPECT_TRUE(needed_by.at(m::l2_hit_pct).empty());

  const auto text = test::run_cli({"list", "--metrics"});
  EXPECT_NE(text.out.find("needed by"), std::string::npos);
}

}  // namespace
}  // namespace gpulab::report
