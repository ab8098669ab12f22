#include "reports/diagnosis_json.hpp"

#include <cmath>

namespace gpulab::report {

json finite_map(const std::map<std::string, double>& values) {
  json out = json::object();
  for (const auto& [name, value] : values)
    if (std::isfinite(value)) out[name] = value;
  return out;
}

json optional_number(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? json(*v) : json(nullptr);
}

namespace {

json evidence_json(const std::vector<Evidence>& evidence) {
  json out = json::array();
  for (const auto& e : evidence) {
    json item = {{"metric", e.metric}, {"value", optional_number(e.value)}};
    if (!e.threshold.empty()) {
      item["relation"] = e.relation;
      item["threshold"] = e.threshold;
      item["threshold_value"] = e.threshold_value;
    }
    out.push_back(std::move(item));
  }
  return out;
}

std::vector<Evidence> read_evidence(const Reader& r, const std::string& key) {
  std::vector<Evidence> out;
  if (!r.has(key)) return out;
  r.each(key, [&](const Reader& e) {
    Evidence ev;
    ev.metric = e.str("metric");
    if (e.has("value")) ev.value = e.num("value");
    ev.relation = e.str_or("relation", "");
    ev.threshold = e.str_or("threshold", "");
    ev.threshold_value = e.num_or("threshold_value", 0);
    out.push_back(std::move(ev));
  });
  return out;
}

}  // namespace

json diagnosis_json(const Diagnosis& d) {
  json path = json::array(), findings = json::array();
  for (const auto& s : d.path) {
    path.push_back({{"node", s.node},
                    {"depth", s.depth},
                    {"question", s.question},
                    {"expression", s.expression},
                    {"evidence", evidence_json(s.evidence)},
                    {"answer", s.answer},
                    {"finding", s.finding}});
    if (!s.missing.empty()) path.back()["missing"] = s.missing;
  }
  for (const auto& f : d.findings) {
    findings.push_back({{"id", f.id},
                        {"title", f.title},
                        {"severity", f.severity},
                        {"score", f.score},
                        {"evidence", evidence_json(f.evidence)},
                        {"explanation", f.explanation},
                        {"recommendation", f.recommendation},
                        {"detail", f.detail},
                        {"false_if", f.false_if},
                        {"labs", f.labs}});
    if (f.estimate)
      findings.back()["estimate"] = {{"saved", f.estimate->saved},
                                     {"speedup", f.estimate->speedup()},
                                     {"model", f.estimate->model},
                                     {"inputs", f.estimate->inputs}};
    if (f.lines.empty()) continue;
    auto& lines = findings.back()["lines"] = json::array();
    for (const auto& l : f.lines)
      lines.push_back({{"file", l.file},
                       {"line", l.line},
                       {"share", l.share},
                       {"what", l.what},
                       {"detail", l.detail}});
  }
  return {{"verdict", d.verdict},    {"principal", d.findings.empty() ? "" : d.findings.front().id},
          {"path", std::move(path)}, {"findings", std::move(findings)},
          {"caveats", d.caveats},    {"thresholds_overridden", d.thresholds_overridden}};
}

Diagnosis read_diagnosis(const Reader& r) {
  Diagnosis d;
  d.verdict = r.str_or("verdict", "");
  if (r.has("path"))
    r.each("path", [&](const Reader& s) {
      PathStep step;
      step.node = s.str("node");
      step.depth = static_cast<int>(s.integer_or("depth", 0));
      step.question = s.str_or("question", "");
      step.expression = s.str_or("expression", "");
      step.evidence = read_evidence(s, "evidence");
      step.answer = s.str_or("answer", "");
      step.finding = s.str_or("finding", "");
      if (s.has("missing"))
        s.each("missing", [&](const Reader& m) { step.missing.push_back(m.as_string()); });
      d.path.push_back(std::move(step));
    });
  if (r.has("findings"))
    r.each("findings", [&](const Reader& f) {
      Finding finding;
      finding.id = f.str("id");
      finding.title = f.str_or("title", "");
      finding.severity = f.str_or("severity", "");
      finding.score = f.num_or("score", 0);
      finding.evidence = read_evidence(f, "evidence");
      finding.explanation = f.str_or("explanation", "");
      finding.recommendation = f.str_or("recommendation", "");
      finding.detail = f.str_or("detail", "");
      finding.false_if = f.str_or("false_if", "");
      if (f.has("labs"))
        f.each("labs", [&](const Reader& l) { finding.labs.push_back(l.as_string()); });
      if (f.has("lines"))
        f.each("lines", [&](const Reader& l) {
          finding.lines.push_back({l.str("file"), static_cast<int>(l.integer("line")),
                                   l.num("share"), l.str_or("what", ""), l.str_or("detail", "")});
        });
      if (f.has("estimate")) {
        const auto e = f.at("estimate");
        finding.estimate =
            Estimate{e.num("saved"), e.str("model"), e.number_map_or_empty("inputs")};
      }
      d.findings.push_back(std::move(finding));
    });
  if (r.has("caveats"))
    r.each("caveats", [&](const Reader& c) { d.caveats.push_back(c.as_string()); });
  d.thresholds_overridden = r.number_map_or_empty("thresholds_overridden");
  return d;
}

}  // namespace gpulab::report
