#include "outside_labels.hpp"

#include <algorithm>
#include <regex>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/base/errors.hpp"
#include "reports/base/input_file.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/kernel_name.hpp"
#include "reports/report.hpp"

namespace gpulab::outside {
namespace {

using nlohmann::json;

// Every field an entry may have: any other is a typo that would leave a field unread.
const std::set<std::string>& known_fields() {
  static const std::set<std::string> fields = {
      "report",       "function",     "launch",    "label",
      "set",          "evidence",     "reasoning", "decided_before_gpulab",
      "disagreement", "revised_from", "revision"};
  return fields;
}

class EntryReader {
 public:
  EntryReader(const json& entry, std::string where) : entry_(entry), where_(std::move(where)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    throw UsageError(fmt::format("{}.{}: {}", where_, field, problem));
  }

  // A required string with something in it: an entry without its evidence or reasoning is an
  // assertion, not a label.
  std::string text(const std::string& field) const {
    if (!entry_.contains(field)) fail(field, "missing");
    return nonempty(field);
  }

  std::string optional_text(const std::string& field) const {
    return entry_.contains(field) ? nonempty(field) : std::string();
  }

  std::optional<int> optional_index(const std::string& field) const {
    if (!entry_.contains(field)) return std::nullopt;
    const json& v = entry_.at(field);
    if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 1'000'000'000)
      fail(field, "expected a launch index (an integer from 0)");
    return static_cast<int>(v.get<long long>());
  }

  bool flag(const std::string& field) const {
    if (!entry_.contains(field)) fail(field, "missing");
    if (!entry_.at(field).is_boolean()) fail(field, "expected true or false");
    return entry_.at(field).get<bool>();
  }

 private:
  std::string nonempty(const std::string& field) const {
    const json& v = entry_.at(field);
    if (!v.is_string()) fail(field, "expected a string");
    std::string s = v.get<std::string>();
    if (s.find_first_not_of(" \t\n") == std::string::npos) fail(field, "empty");
    return s;
  }

  const json& entry_;
  std::string where_;
};

bool valid_label(const std::string& label) {
  return label == kNoBottleneck || label == kTooLittleWork || report::find_finding(label);
}

LabelEntry read_entry(const json& j, const std::string& where) {
  if (!j.is_object()) throw UsageError(where + ": expected an object");
  for (const auto& item : j.items())
    if (!known_fields().count(item.key()))
      throw UsageError(fmt::format("{}: unknown field '{}'", where, item.key()));
  const EntryReader r(j, where);
  LabelEntry e;
  e.report = r.text("report");
  // A file of the corpus folder, by name: nothing outside it is a corpus report.
  if (e.report.find('/') != std::string::npos || e.report.find('\\') != std::string::npos ||
      e.report.rfind('.', 0) == 0)
    r.fail("report", fmt::format("'{}' is not a file name in the corpus folder", e.report));
  e.function = r.text("function");
  try {
    std::regex check(e.function);
  } catch (const std::regex_error& error) {
    r.fail("function",
           fmt::format("'{}' is not a regular expression: {}", e.function, error.what()));
  }
  e.launch = r.optional_index("launch");
  e.label = r.text("label");
  if (!valid_label(e.label))
    r.fail("label", fmt::format("'{}' is no finding id, '{}' or '{}'", e.label, kNoBottleneck,
                                kTooLittleWork));
  e.set = r.text("set");
  if (e.set != kTuningSet && e.set != kHeldOutSet)
    r.fail("set", fmt::format("'{}' is neither '{}' nor '{}'", e.set, kTuningSet, kHeldOutSet));
  e.evidence = r.text("evidence");
  e.reasoning = r.text("reasoning");
  // The corpus tests gpulab against labels that did not come from it.
  if (!r.flag("decided_before_gpulab"))
    r.fail("decided_before_gpulab",
           "a label decided after reading gpulab's diagnosis is no outside evidence");
  e.disagreement = r.optional_text("disagreement");
  e.revised_from = r.optional_text("revised_from");
  e.revision = r.optional_text("revision");
  if (e.revised_from.empty() != e.revision.empty())
    r.fail(e.revision.empty() ? "revision" : "revised_from",
           "a revised label names both the label it replaces and the evidence for the change");
  if (!e.revised_from.empty() && !valid_label(e.revised_from))
    r.fail("revised_from", fmt::format("'{}' is no finding id, '{}' or '{}'", e.revised_from,
                                       kNoBottleneck, kTooLittleWork));
  if (!e.revised_from.empty() && e.revised_from == e.label)
    r.fail("revised_from", "the same as the label: nothing was revised");
  return e;
}

// gpulab's answer for one diagnosed launch: its principal finding, "too-little-work" when the
// walk stopped at the work node, empty for none.
std::string answer_of(const report::Kernel& k) {
  if (!k.diagnosis->findings.empty()) return k.diagnosis->findings.front().id;
  return k.diagnosis->verdict == kTooLittleWork ? kTooLittleWork : "";
}

// A kernel without a diagnosis had no counters: it has no answer, which is not "none".
bool has_diagnosis(const report::Kernel& k) { return k.diagnosis.has_value(); }

}  // namespace

std::vector<LabelEntry> parse_labels(const std::string& text, const std::string& where) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("{}: not valid JSON: {}", where, e.what()));
  }
  if (!doc.is_object()) throw UsageError(where + ": expected an object");
  if (!doc.contains("schema") || doc.at("schema") != kLabelsSchema)
    throw UsageError(fmt::format("{}: schema: expected \"{}\"", where, kLabelsSchema));
  if (!doc.contains("kernels") || !doc.at("kernels").is_array())
    throw UsageError(where + ": kernels: expected an array");
  std::vector<LabelEntry> entries;
  std::set<std::tuple<std::string, std::string, int>> seen;
  for (std::size_t i = 0; i < doc.at("kernels").size(); ++i) {
    const std::string at = fmt::format("{}: kernels[{}]", where, i);
    LabelEntry e = read_entry(doc.at("kernels").at(i), at);
    // One label per kernel: two could say different things and both count.
    if (!seen.insert({e.report, e.function, e.launch.value_or(-1)}).second)
      throw UsageError(fmt::format("{}: {} '{}'{} is labelled twice", at, e.report, e.function,
                                   e.launch ? fmt::format(" launch {}", *e.launch) : ""));
    entries.push_back(std::move(e));
  }
  return entries;
}

std::vector<LabelEntry> load_labels(const std::string& path) {
  return parse_labels(read_file(path), path);
}

bool agrees(const std::string& label, const std::string& answer) {
  if (label == kNoBottleneck) return answer.empty();
  return label == answer;
}

Verdict judge(const LabelEntry& entry, const report::Report& diagnosed) {
  Verdict v;
  v.label = entry.label;
  v.kernel = fmt::format("{}: /{}/", entry.report, entry.function);
  const std::regex pattern(entry.function);
  std::vector<const report::Variant*> matches;
  for (const auto& variant : diagnosed.variants)
    if (variant.role == report::Role::function && std::regex_search(variant.description, pattern))
      matches.push_back(&variant);
  if (matches.empty()) {
    v.problem = "no kernel function of the report matches";
    return v;
  }
  if (matches.size() > 1) {
    v.problem = fmt::format("{} kernel functions match ({}, {}, ...): the pattern must name one",
                            matches.size(), matches[0]->name, matches[1]->name);
    return v;
  }
  const report::Variant& function = *matches.front();
  v.kernel = fmt::format("{}: {}", entry.report, report::shown_function(function.description, 60));
  if (!entry.launch) {
    if (std::none_of(function.kernels.begin(), function.kernels.end(), has_diagnosis)) {
      v.problem = "no launch of it has a diagnosis (none was profiled with counters)";
      return v;
    }
    v.principal = report::principal_finding(function);
    for (const auto& k : function.kernels)
      if (k.diagnosis) v.findings = std::max(v.findings, k.diagnosis->findings.size());
    // No finding: too little work when every diagnosed launch of it stopped at the work node.
    if (v.principal.empty() &&
        std::all_of(function.kernels.begin(), function.kernels.end(), [](const report::Kernel& k) {
          return !k.diagnosis || k.diagnosis->verdict == kTooLittleWork;
        }))
      v.principal = kTooLittleWork;
  } else {
    v.kernel += fmt::format(" #{}", *entry.launch);
    const report::Kernel* launch = nullptr;
    for (const auto& k : function.kernels)
      if (k.launch_index == *entry.launch) launch = &k;
    if (!launch) {
      v.problem =
          fmt::format("launch {} was not profiled ({} of {} were)", *entry.launch,
                      function.kernels.size(), function.totals ? function.totals->launches : 0);
      return v;
    }
    if (!has_diagnosis(*launch)) {
      v.problem =
          fmt::format("launch {} has no diagnosis (its counters are missing)", *entry.launch);
      return v;
    }
    v.principal = answer_of(*launch);
    v.findings = launch->diagnosis->findings.size();
  }
  v.agrees = agrees(entry.label, v.principal);
  if (v.principal.empty()) v.principal = kNoBottleneck;
  return v;
}

namespace {

std::string launch_text(const std::optional<int>& launch) {
  return launch ? std::to_string(*launch) : "-";
}

std::string kernel_text(const std::string& report, const std::string& function,
                        const std::string& launch) {
  return fmt::format("{} '{}' launch {}", report, function, launch);
}

}  // namespace

std::vector<FrozenLabel> parse_frozen(const std::string& text, const std::string& where) {
  std::vector<FrozenLabel> rows;
  std::size_t start = 0, number = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    for (std::size_t from = 0;;) {
      const std::size_t tab = line.find('\t', from);
      fields.push_back(
          line.substr(from, tab == std::string::npos ? std::string::npos : tab - from));
      if (tab == std::string::npos) break;
      from = tab + 1;
    }
    if (fields.size() != 5)
      throw UsageError(fmt::format("{}:{}: expected 5 tab-separated fields, found {}", where,
                                   number, fields.size()));
    if (!valid_label(fields[3]))
      throw UsageError(fmt::format("{}:{}: '{}' is no label", where, number, fields[3]));
    if (fields[4] != kTuningSet && fields[4] != kHeldOutSet)
      throw UsageError(fmt::format("{}:{}: '{}' is no set", where, number, fields[4]));
    rows.push_back({fields[0], fields[1], fields[2], fields[3], fields[4]});
  }
  return rows;
}

std::vector<FrozenLabel> load_frozen(const std::string& path) {
  return parse_frozen(read_file(path), path);
}

std::vector<std::string> frozen_differences(const std::vector<LabelEntry>& entries,
                                            const std::vector<FrozenLabel>& frozen) {
  std::vector<std::string> out;
  std::set<std::size_t> matched;
  for (const auto& e : entries) {
    const std::string launch = launch_text(e.launch);
    const auto row = std::find_if(frozen.begin(), frozen.end(), [&](const FrozenLabel& f) {
      return f.report == e.report && f.function == e.function && f.launch == launch;
    });
    const std::string kernel = kernel_text(e.report, e.function, launch);
    if (row == frozen.end()) {
      out.push_back(kernel + ": labelled but not frozen");
      continue;
    }
    matched.insert(static_cast<std::size_t>(row - frozen.begin()));
    if (row->label != e.first_label())
      out.push_back(fmt::format("{}: first decided as {}, frozen as {}", kernel, e.first_label(),
                                row->label));
    if (row->set != e.set)
      out.push_back(
          fmt::format("{}: in the {} set, frozen in the {} set", kernel, e.set, row->set));
  }
  for (std::size_t i = 0; i < frozen.size(); ++i)
    if (!matched.count(i))
      out.push_back(kernel_text(frozen[i].report, frozen[i].function, frozen[i].launch) +
                    ": frozen but no longer labelled");
  return out;
}

}  // namespace gpulab::outside
