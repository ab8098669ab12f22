// `gpulab selftest`: run every lab on the GPU, diagnose it, and check that each variant's
// principal finding is the one the lab expects: the labs validate the decision tree.
#include <fmt/format.h>

#include "app/commands.hpp"
#include "app/option_checks.hpp"
#include "labs/harness/registry.hpp"
#include "reports/base/errors.hpp"
#include "reports/base/user_input.hpp"
#include "reports/diagnosis/expectations.hpp"
#include "reports/render/escape.hpp"
#include "reports/render/render_diagnosis.hpp"
#include "reports/render/table.hpp"
#include "reports/report.hpp"

namespace gpulab::app {

CLI::App* add_selftest(CLI::App& root, SelftestOptions& options) {
  auto* cmd = root.add_subcommand(
      "selftest", "Run every lab and check each variant's principal finding (needs a GPU)");
  cmd->add_option("--labs", options.labs, "Comma-separated labs, or all")->capture_default_str();
  cmd->add_option("--repeat,-r", options.repeat, "Timed launches per variant")
      ->check(integer_in(1, 1000))
      ->capture_default_str();
  return cmd;
}

SelftestVerdict judge_labs(const std::vector<const labs::Lab*>& labs,
                           const std::vector<report::Report>& reports) {
  report::TextTable table({"lab", "variant", "role", "expected", "obtained", "result"}, 6);
  std::string causes;  // a line for each failing row: what decided it
  bool failed = false;
  for (std::size_t l = 0; l < labs.size() && l < reports.size(); ++l) {
    const auto& spec = labs[l]->spec();
    const auto& r = reports[l];
    std::map<std::string, report::Expectation> expected;
    for (const auto& v : spec.variants) expected[v.name] = v.expected;
    const auto judgements = report::judge_findings(r, expected);
    for (std::size_t i = 0; i < judgements.size(); ++i) {
      const auto& j = judgements[i];
      failed = failed || j.failed;
      table.add_row({spec.name, j.variant, report::to_string(r.variants[i].role), j.expected.text(),
                     j.obtained.empty() ? "none" : j.obtained, j.result});
      for (const auto& step : j.decided_by)
        causes +=
            fmt::format("{}/{}: {}: {} → {}\n", spec.name, j.variant, step.node,
                        report::evidence_text(step.evidence),
                        step.finding.empty() ? step.answer : step.answer + ": " + step.finding);
    }
  }
  // The card the reports were measured on: an expectation may hold on one card and not another.
  const std::string card = reports.empty() ? "" : report::terminal_safe(reports[0].device.name);
  return {table.render() + causes + (failed ? "selftest: FAILED" : "selftest: passed") +
              (card.empty() ? "" : " on " + card) + "\n",
          failed};
}

int run_selftest(const SelftestOptions& options, Session& session, Io& io) {
  std::vector<const labs::Lab*> selected;
  if (options.labs == "all") {
    selected = labs::all_labs();
  } else {
    for (const auto& name : split_list("--labs", options.labs))
      selected.push_back(&labs::lab_or_throw(name));
  }

  std::vector<report::Report> reports;
  for (const auto* lab : selected) {
    const auto& spec = lab->spec();
    RunSettings settings;
    if (!spec.traced) settings.metrics = "full";  // traced labs are diagnosed from their trace
    settings.repeat = options.repeat;
    settings.progress = io.progress;
    reports.push_back(run_lab(session, *lab, settings, {"gpulab", "selftest"}));
    diagnose_into(reports.back(), report::Thresholds());
    for (const auto& w : reports.back().warnings)
      io.err << "gpulab: warning: " << spec.name << ": " << w << "\n";
  }

  const auto verdict = judge_labs(selected, reports);
  io.out << verdict.text;
  return verdict.failed ? static_cast<int>(ExitCode::selftest_failed) : 0;
}

}  // namespace gpulab::app
