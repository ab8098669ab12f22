// `gpulab selftest`: run every lab on the GPU, diagnose it, and check that each variant's
// principal finding is the one the lab expects: the labs validate the decision tree.
#include <fmt/format.h>

#include "app/commands.hpp"
#include "labs/registry.hpp"
#include "reports/errors.hpp"
#include "reports/table.hpp"

namespace gpulab::app {
namespace {

struct Row {
  std::string lab, variant, role, expected, obtained, result;
};

// A baseline (or a variant with an expectation) passes when its principal finding is the
// expected one. An optimized variant must also not carry its baseline's expected finding.
std::string judge(const labs::VariantSpec& spec, const report::Variant& v,
                  const std::string& baseline_finding, const std::string& principal) {
  if (v.status == report::VariantStatus::skipped) return "skipped";
  if (v.check.status == report::CheckStatus::failed) return "FAIL (check)";
  if (!report::has_diagnosis(v)) return "FAIL (no counters)";
  if (!spec.expected_finding.empty() && principal != spec.expected_finding) return "FAIL";
  if (spec.role != report::Role::baseline && !baseline_finding.empty() &&
      baseline_finding != spec.expected_finding && report::carries_finding(v, baseline_finding))
    return "FAIL (still " + baseline_finding + ")";
  return spec.expected_finding.empty() ? "pass (no expectation)" : "pass";
}

}  // namespace

CLI::App* add_selftest(CLI::App& root, SelftestOptions& options) {
  auto* cmd = root.add_subcommand(
      "selftest", "Run every lab and check each variant's principal finding (needs a GPU)");
  cmd->add_option("--labs", options.labs, "Comma-separated labs, or all")->capture_default_str();
  cmd->add_option("--repeat,-r", options.repeat, "Timed launches per variant")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  return cmd;
}

int run_selftest(const SelftestOptions& options, Session& session, Io& io) {
  std::vector<const labs::Lab*> selected;
  if (options.labs == "all") {
    selected = labs::all_labs();
  } else {
    std::size_t start = 0;
    while (start <= options.labs.size()) {
      const auto comma = options.labs.find(',', start);
      const auto name = options.labs.substr(start, comma == std::string::npos ? comma : comma - start);
      if (!name.empty()) selected.push_back(&labs::lab_or_throw(name));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }

  std::vector<Row> rows;
  bool failed = false;
  for (const auto* lab : selected) {
    const auto& spec = lab->spec();
    RunSettings settings;
    if (!spec.traced) settings.metrics = "full";  // traced labs are diagnosed from their trace
    settings.repeat = options.repeat;
    settings.progress = io.progress;
    auto r = run_lab(session, *lab, settings, {"gpulab", "selftest"});
    diagnose_into(r, report::Thresholds());
    const std::string baseline_finding = spec.variants.front().expected_finding;
    for (const auto& v : r.variants) {
      const auto* vs = spec.find_variant(v.name);
      const std::string principal = report::principal_finding(v);
      const std::string result = judge(*vs, v, baseline_finding, principal);
      failed = failed || result.rfind("FAIL", 0) == 0;
      rows.push_back({spec.name, v.name, report::to_string(v.role),
                      vs->expected_finding.empty() ? "-" : vs->expected_finding,
                      principal.empty() ? "none" : principal, result});
    }
    for (const auto& w : r.warnings) io.err << "gpulab: warning: " << spec.name << ": " << w << "\n";
  }

  TextTable table({"lab", "variant", "role", "expected", "obtained", "result"}, 6);
  for (const auto& row : rows)
    table.add_row({row.lab, row.variant, row.role, row.expected, row.obtained, row.result});
  io.out << table.render();
  io.out << (failed ? "selftest: FAILED\n" : "selftest: passed\n");
  return failed ? static_cast<int>(ExitCode::selftest_failed) : 0;
}

}  // namespace gpulab::app
