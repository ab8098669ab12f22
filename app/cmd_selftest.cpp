// `gpulab selftest`: run every lab on the GPU, diagnose it, and check that each variant's
// principal finding is the one the lab expects: the labs validate the decision tree. With
// --estimates, the estimated gains are checked against the labs' fixes too; with --reports, saved
// reports are judged instead (no GPU needed).
#include <filesystem>

#include <fmt/format.h>

#include "app/commands.hpp"
#include "app/option_checks.hpp"
#include "labs/harness/registry.hpp"
#include "reports/base/errors.hpp"
#include "reports/base/user_input.hpp"
#include "reports/diagnosis/estimates.hpp"
#include "reports/diagnosis/expectations.hpp"
#include "reports/render/escape.hpp"
#include "reports/render/render_diagnosis.hpp"
#include "reports/render/table.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"

namespace gpulab::app {

CLI::App* add_selftest(CLI::App& root, SelftestOptions& options) {
  auto* cmd = root.add_subcommand(
      "selftest", "Run every lab and check each variant's principal finding (needs a GPU)");
  cmd->add_option("--labs", options.labs, "Comma-separated labs, or all")->capture_default_str();
  cmd->add_option("--repeat,-r", options.repeat, "Timed launches per variant")
      ->check(integer_in(1, 1000))
      ->capture_default_str();
  cmd->add_option("--reports", options.reports,
                  "Judge the lab reports saved in this folder (LAB.json, as `run --json` writes "
                  "them) instead of running the labs");
  cmd->add_flag("--estimates", options.estimates,
                "Also check the estimated gains against the labs' fixes (docs/estimates.md)");
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

std::string estimates_calibration(const std::vector<report::Report>& reports) {
  std::vector<report::CalibrationRow> rows;
  for (const auto& r : reports)
    for (auto& row : report::calibrate(r)) rows.push_back(std::move(row));
  return report::calibration_table(rows);
}

namespace {

// The saved report of each lab in `folder`; a lab of `all` without one is left out (and said),
// a lab named on the command line without one is an error.
std::vector<report::Report> saved_reports(const std::string& folder, bool all,
                                          std::vector<const labs::Lab*>& selected, Io& io) {
  if (!std::filesystem::is_directory(folder))
    throw UsageError(fmt::format("--reports {}: not a folder", folder));
  std::vector<const labs::Lab*> found;
  std::vector<report::Report> reports;
  for (const auto* lab : selected) {
    const auto& name = lab->spec().name;
    const auto path = (std::filesystem::path(folder) / (name + ".json")).string();
    if (all && !std::filesystem::exists(path)) {
      io.err << "gpulab: warning: " << report::terminal_safe(folder) << " holds no report of "
             << name << ": not judged\n";
      continue;
    }
    reports.push_back(report::load_report(path));
    if (reports.back().lab.name != name)
      throw UsageError(fmt::format(
          "{}: a report of {}, not of {}", path,
          reports.back().lab.name.empty() ? "a program" : reports.back().lab.name, name));
    diagnose_into(reports.back(), report::Thresholds());
    found.push_back(lab);
  }
  selected = std::move(found);
  return reports;
}

// Each lab run on the GPU and diagnosed, its warnings said.
std::vector<report::Report> run_labs(const std::vector<const labs::Lab*>& selected, int repeat,
                                     Session& session, Io& io) {
  std::vector<report::Report> reports;
  for (const auto* lab : selected) {
    const auto& spec = lab->spec();
    RunSettings settings;
    settings.diagnosed = true;
    settings.repeat = repeat;
    settings.progress = io.progress;
    reports.push_back(run_lab(session, *lab, settings, {"gpulab", "selftest"}));
    diagnose_into(reports.back(), report::Thresholds());
    for (const auto& w : reports.back().warnings)
      io.err << "gpulab: warning: " << spec.name << ": " << w << "\n";
  }
  return reports;
}

}  // namespace

int run_selftest(const SelftestOptions& options, Session& session, Io& io) {
  std::vector<const labs::Lab*> selected;
  const bool all = options.labs == "all";
  if (all) {
    selected = labs::all_labs();
  } else {
    for (const auto& name : split_list("--labs", options.labs))
      selected.push_back(&labs::lab_or_throw(name));
  }

  const auto reports = options.reports.empty() ? run_labs(selected, options.repeat, session, io)
                                               : saved_reports(options.reports, all, selected, io);
  const auto verdict = judge_labs(selected, reports);
  io.out << verdict.text;
  if (options.estimates) io.out << "\n" << estimates_calibration(reports);
  return verdict.failed ? static_cast<int>(ExitCode::selftest_failed) : 0;
}

}  // namespace gpulab::app
