// `gpulab list`: the labs, their parameters and variants; or the metric catalogue; or the
// diagnosis rules and their thresholds. No GPU.
#include <algorithm>
#include <functional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/commands.hpp"
#include "app/option_checks.hpp"
#include "app/outputs.hpp"
#include "labs/harness/registry.hpp"
#include "reports/base/output_file.hpp"
#include "reports/derived.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/render/render_csv.hpp"
#include "reports/render/table.hpp"

namespace gpulab::app {
namespace {

const char* unit_name(report::metrics::Unit unit) {
  using Unit = report::metrics::Unit;
  switch (unit) {
    case Unit::nanoseconds:
      return "ns";
    case Unit::seconds:
      return "s";
    case Unit::bytes:
      return "bytes";
    case Unit::percent:
      return "%";
    case Unit::count:
      return "count";
    case Unit::ratio:
      return "ratio";
    case Unit::fraction:
      return "fraction";
    case Unit::bytes_per_second:
      return "B/s";
  }
  return "";
}

nlohmann::json labs_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const auto* lab : labs::all_labs()) {
    const auto& s = lab->spec();
    nlohmann::json params = nlohmann::json::array();
    for (const auto& p : s.params)
      params.push_back({{"name", p.name},
                        {"description", p.description},
                        {"default", p.default_value},
                        {"min", p.min},
                        {"max", p.max},
                        {"set_by_size", p.set_by_size}});
    nlohmann::json variants = nlohmann::json::array();
    for (const auto& v : s.variants)
      variants.push_back({{"name", v.name},
                          {"role", report::to_string(v.role)},
                          {"description", v.description},
                          {"expected_finding", v.expected.text()},
                          {"expected_any_of", v.expected.any_of},
                          {"expected_none_of", v.expected.none_of},
                          {"expected_why", v.expected.why}});
    out.push_back({{"name", s.name},
                   {"topic", s.topic},
                   {"summary", s.summary},
                   {"teaching_point", s.teaching_point},
                   {"params", params},
                   {"traced", s.traced},
                   {"no_counters", s.no_counters},
                   {"default_warmup", s.default_warmup},
                   {"default_repeat", s.default_repeat},
                   {"variants", variants}});
  }
  return out;
}

std::string labs_text() {
  std::string out;
  for (const auto* lab : labs::all_labs()) {
    const auto& s = lab->spec();
    out += fmt::format("{}  ({})\n  {}\n", s.name, s.topic, s.summary);
    std::string params;
    for (const auto& p : s.params)
      params += fmt::format("{}{}={} [{}..{}]", params.empty() ? "" : ", ", p.name,
                            p.default_value, p.min, p.max);
    if (!params.empty()) out += "  params: " + params + "\n";
    if (s.traced)
      out += fmt::format("  traced: timed {} times after {} warm-up launches, then one launch "
                         "recorded by the activity tracer\n",
                         s.default_repeat, s.default_warmup);
    if (!s.no_counters.empty()) out += "  timing only, no counters: " + s.no_counters + "\n";
    report::TextTable table({"  variant", "role", "description"}, 3);
    for (const auto& v : s.variants)
      table.add_row({"  " + v.name, report::to_string(v.role), v.description});
    out += table.render() + "\n";
  }
  return out;
}

// The diagnosis rules (check nodes of the kernel tree) that need a metric, in tree order.
std::vector<std::string> rules_needing(const std::string& metric) {
  std::vector<std::string> out;
  for (const auto& rule : report::kernel_rules())
    if (std::find(rule.needs.begin(), rule.needs.end(), metric) != rule.needs.end())
      out.push_back(rule.node);
  return out;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

nlohmann::json metrics_json() {
  nlohmann::json raw = nlohmann::json::array(), derived = nlohmann::json::array();
  for (const auto& m : report::metrics::catalogue())
    raw.push_back({{"name", m.name},
                   {"short_name", m.short_name},
                   {"unit", unit_name(m.unit)},
                   {"description", m.description},
                   {"needed_by", rules_needing(m.name)}});
  for (const auto& d : report::derived_catalogue())
    derived.push_back({{"name", d.name},
                       {"unit", unit_name(d.unit)},
                       {"formula", d.formula},
                       {"description", d.description}});
  return {{"metrics", raw}, {"derived", derived}};
}

std::string metrics_text() {
  report::TextTable raw({"short name", "CUPTI metric", "unit", "needed by", "description"}, 5);
  for (const auto& m : report::metrics::catalogue())
    raw.add_row(
        {m.short_name, m.name, unit_name(m.unit), joined(rules_needing(m.name)), m.description});
  report::TextTable derived({"derived", "unit", "formula"}, 3);
  for (const auto& d : report::derived_catalogue())
    derived.add_row({d.name, unit_name(d.unit), d.formula});
  return "metric set 'basic':\n" + raw.render() + "\n" + derived.render();
}

// One row per variant: the form of the CSV and Markdown listings.
std::vector<std::vector<std::string>> variant_rows() {
  std::vector<std::vector<std::string>> out = {
      {"lab", "topic", "variant", "role", "expected_finding", "description"}};
  for (const auto* lab : labs::all_labs()) {
    const auto& s = lab->spec();
    for (const auto& v : s.variants)
      out.push_back(
          {s.name, s.topic, v.name, report::to_string(v.role), v.expected.text(), v.description});
  }
  return out;
}

std::string csv_of(const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  for (const auto& row : rows) out += report::csv_line(row);
  return out;
}

std::string markdown_of(const std::vector<std::vector<std::string>>& rows) {
  report::TextTable table(rows.front(), rows.front().size());
  for (std::size_t i = 1; i < rows.size(); ++i) table.add_row(rows[i]);
  return table.render_markdown();
}

std::string metrics_markdown() {
  report::TextTable raw({"CUPTI metric", "short name", "unit", "needed by", "description"}, 5);
  for (const auto& m : report::metrics::catalogue())
    raw.add_row(
        {m.name, m.short_name, unit_name(m.unit), joined(rules_needing(m.name)), m.description});
  report::TextTable derived({"derived", "unit", "formula", "description"}, 4);
  for (const auto& d : report::derived_catalogue())
    derived.add_row({d.name, unit_name(d.unit), d.formula, d.description});
  return raw.render_markdown() + "\n" + derived.render_markdown();
}

// Metric names as text reports show them: the catalogue's short names.
std::vector<std::string> short_names(const std::vector<std::string>& metrics) {
  std::vector<std::string> out;
  for (const auto& name : metrics) {
    const auto* m = report::metrics::find(name);
    out.emplace_back(m ? m->short_name : name);
  }
  return out;
}

// The rules, one row each: the form of the CSV listing (CUPTI names) and the Markdown one
// (short names).
std::vector<std::vector<std::string>> rule_rows(bool short_metric_names) {
  std::vector<std::vector<std::string>> out = {
      {"rule", "walk", "branches", "question", "finding", "thresholds", "needs"}};
  for (const auto& r : report::all_rules())
    out.push_back({r.node, r.walk, joined(r.branches), r.question, r.finding, joined(r.thresholds),
                   joined(short_metric_names ? short_names(r.needs) : r.needs)});
  return out;
}

// The thresholds, one row each, with the rule that declares each ("" for a walk's own).
std::vector<std::vector<std::string>> threshold_rows() {
  std::vector<std::vector<std::string>> out = {
      {"threshold", "default", "range", "rule", "meaning"}};
  for (const auto& t : report::threshold_catalogue()) {
    const auto* rule = report::rule_of_threshold(t.name);
    out.push_back({t.name, fmt::format("{}", t.default_value),
                   fmt::format("{} to {}", t.min, t.max), rule ? rule->node : "(the walk's own)",
                   t.meaning});
  }
  return out;
}

nlohmann::json rules_json() {
  nlohmann::json rules = nlohmann::json::array(), thresholds = nlohmann::json::array();
  for (const auto& r : report::all_rules())
    rules.push_back({{"rule", r.node},
                     {"walk", r.walk},
                     {"branches", r.branches},
                     {"question", r.question},
                     {"finding", r.finding},
                     {"thresholds", r.thresholds},
                     {"needs", r.needs}});
  for (const auto& t : report::threshold_catalogue()) {
    const auto* rule = report::rule_of_threshold(t.name);
    thresholds.push_back({{"name", t.name},
                          {"default", t.default_value},
                          {"min", t.min},
                          {"max", t.max},
                          {"rule", rule ? nlohmann::json(rule->node) : nlohmann::json()},
                          {"meaning", t.meaning}});
  }
  return {{"rules", rules}, {"thresholds", thresholds}};
}

std::string rules_text() {
  report::TextTable rules({"rule", "walk", "question", "finding", "needs"}, 5);
  for (const auto& r : report::all_rules())
    rules.add_row({r.node, r.walk, r.question, r.finding, joined(short_names(r.needs))});
  const auto rows = threshold_rows();
  report::TextTable thresholds(rows.front(), 5);
  for (std::size_t i = 1; i < rows.size(); ++i) thresholds.add_row(rows[i]);
  return rules.render() + "\n" + thresholds.render();
}

std::string metrics_csv() {
  std::string out = report::csv_line({"name", "short_name", "unit", "description", "needed_by"});
  for (const auto& m : report::metrics::catalogue())
    out += report::csv_line(
        {m.name, m.short_name, unit_name(m.unit), m.description, joined(rules_needing(m.name))});
  for (const auto& d : report::derived_catalogue())
    out += report::csv_line({d.name, d.name, unit_name(d.unit), d.description, ""});
  return out;
}

}  // namespace

CLI::App* add_list(CLI::App& root, ListOptions& options) {
  auto* cmd = root.add_subcommand("list", "List the labs with their parameters and variants");
  cmd->add_option("--json", options.json_path, "Also write the listing as JSON to FILE")
      ->type_name("FILE");
  add_format_option(*cmd, options.format);
  auto* metrics =
      cmd->add_flag("--metrics", options.metrics, "List the metric catalogue instead of the labs");
  cmd->add_flag("--rules", options.rules,
                "List the diagnosis rules and their thresholds instead of the labs")
      ->excludes(metrics);
  return cmd;
}

namespace {

// One listing in each of the formats.
struct Listing {
  std::function<nlohmann::json()> json;
  std::function<std::string()> text, csv, markdown;
};

Listing listing_of(const ListOptions& options) {
  if (options.metrics) return {metrics_json, metrics_text, metrics_csv, metrics_markdown};
  if (options.rules)
    return {rules_json, rules_text, [] { return csv_of(rule_rows(false)); },
            [] { return markdown_of(rule_rows(true)) + "\n" + markdown_of(threshold_rows()); }};
  return {labs_json, labs_text, [] { return csv_of(variant_rows()); },
          [] { return markdown_of(variant_rows()); }};
}

}  // namespace

int run_list(const ListOptions& options, Io& io) {
  const OutputFormat format = options.format;
  const Listing listing = listing_of(options);
  const auto json = [&] { return listing.json().dump(2) + "\n"; };
  if (!options.json_path.empty()) check_output(options.json_path);
  Io text = text_io(io, {options.json_path});
  if (format == OutputFormat::json) {
    text.out << json();
  } else if (format == OutputFormat::csv) {
    text.out << listing.csv();
  } else if (format == OutputFormat::markdown) {
    text.out << listing.markdown();
  } else {
    text.out << listing.text();
  }
  return save_outputs({{options.json_path, options.json_path.empty() ? "" : json()}}, io);
}

}  // namespace gpulab::app
