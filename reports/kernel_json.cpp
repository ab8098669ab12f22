#include "reports/kernel_json.hpp"

#include <map>
#include <set>
#include <string>

#include <fmt/format.h>

#include "reports/diagnosis_json.hpp"
#include "reports/principal.hpp"
#include "reports/source_json.hpp"

namespace gpulab::report {
namespace {

using nlohmann::json;

// A launch's own fields: all but its diagnosis and its source, which the columns store apart.
json kernel_fields_json(const Kernel& k) {
  const auto& a = k.attributes;
  json out = {{"name", k.name},
              {"launch_index", k.launch_index},
              {"attributes",
               {{"registers_per_thread", a.registers_per_thread},
                {"local_bytes_per_thread", a.local_bytes_per_thread},
                {"static_shared_bytes", a.static_shared_bytes},
                {"dynamic_shared_bytes", a.dynamic_shared_bytes},
                {"block_threads", a.block_threads},
                {"grid_blocks", a.grid_blocks},
                {"max_active_blocks_per_sm", a.max_active_blocks_per_sm},
                {"theoretical_occupancy", a.theoretical_occupancy}}},
              {"metrics", finite_map(k.metrics)},
              {"derived", finite_map(k.derived)}};
  auto& attributes = out["attributes"];
  if (a.spill_store_bytes) attributes["spill_store_bytes"] = *a.spill_store_bytes;
  if (a.spill_load_bytes) attributes["spill_load_bytes"] = *a.spill_load_bytes;
  if (a.stack_frame_bytes) attributes["stack_frame_bytes"] = *a.stack_frame_bytes;
  // Absent, not empty, where the function is unknown (reports older than the field).
  if (!k.function.empty()) out["function"] = k.function;
  if (!k.mangled_name.empty()) out["mangled_name"] = k.mangled_name;
  if (!k.nvtx_path.empty()) out["nvtx_path"] = k.nvtx_path;
  return out;
}

// One field over every launch: its value where all launches have the same, else an array of
// each launch's (null where a launch has none).
json column(const std::vector<const json*>& values) {
  bool shared = values[0] != nullptr;
  for (const json* v : values) shared = shared && v && *v == *values[0];
  if (shared) return *values[0];
  json out = json::array();
  for (const json* v : values) out.push_back(v ? *v : json());
  return out;
}

// The columns of the rows' fields under `key` (one level into the rows' objects).
json columns_of(const std::vector<json>& rows, const std::string& key) {
  std::set<std::string> names;
  for (const auto& row : rows)
    for (auto it = row.at(key).begin(); it != row.at(key).end(); ++it) names.insert(it.key());
  json out = json::object();
  std::vector<const json*> values(rows.size());
  for (const auto& name : names) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const json& object = rows[i].at(key);
      const auto it = object.find(name);
      values[i] = it == object.end() ? nullptr : &*it;
    }
    out[name] = column(values);
  }
  return out;
}

// What two launches' diagnoses must share for one to stand for the other.
std::string outcome_key(const Diagnosis& d) {
  std::string key = d.verdict + '\n' + std::to_string(d.caveats.size()) + '\n';
  for (const auto& step : d.path) {
    key += step.node + '\t' + step.answer + '\t' + step.finding;
    for (const auto& m : step.missing) key += '\t' + m;
    key += '\n';
  }
  for (const auto& f : d.findings) key += f.id + '\t';
  return key;
}

// For each launch, the launch whose diagnosis is stored for it (npos: not diagnosed): of the
// launches of its outcome, the first of those that speak for the function before the others
// (speaks_before: one with per-instruction data, then the longest). That is the launch the
// renderers show for its function (diagnosed_functions, reports/principal.hpp), which so keeps
// its own evidence and lines.
std::vector<std::size_t> stored_for(const std::vector<Kernel>& kernels) {
  std::vector<std::string> keys(kernels.size());
  std::map<std::string, std::size_t> speaker;  // outcome -> the launch that speaks for it
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    if (!kernels[i].diagnosis) continue;
    keys[i] = outcome_key(*kernels[i].diagnosis);
    const auto [at, added] = speaker.emplace(keys[i], i);
    if (!added && speaks_before(kernels[i], kernels[at->second])) at->second = i;
  }
  std::vector<std::size_t> out(kernels.size(), std::string::npos);
  for (std::size_t i = 0; i < kernels.size(); ++i)
    if (kernels[i].diagnosis) out[i] = speaker.at(keys[i]);
  return out;
}

// One field's column, checked once: one value for every launch, or one per launch.
struct Column {
  std::string name;
  const json* values;
  bool per_launch;

  Column(std::string field, const Reader& column, std::size_t count)
      : name(std::move(field)), values(&column.node()), per_launch(values->is_array()) {
    if (per_launch && values->size() != count)
      Reader::fail(column.where(),
                   "expected one value for each of the " + std::to_string(count) + " launches");
  }
  // The launch's value; null where it has none.
  const json* at(std::size_t launch) const {
    if (!per_launch) return values;
    const json& v = (*values)[launch];
    return v.is_null() ? nullptr : &v;
  }
};

// A kernel field's columns: a value field's one, or an object field's (attributes, metrics).
struct FieldColumns {
  std::string name;
  std::vector<Column> columns;
  bool object;
};

constexpr std::size_t kStringBytes = 32;  // a std::string's own, beside its text
constexpr std::size_t kEntryBytes = 64;   // a map entry's or a vector element's, beside its text

std::size_t text_bytes(const std::string& s) { return kStringBytes + s.size(); }

std::size_t evidence_bytes(const std::vector<Evidence>& evidence) {
  std::size_t n = 0;
  for (const auto& e : evidence)
    n += kEntryBytes + text_bytes(e.metric) + text_bytes(e.relation) + text_bytes(e.threshold);
  return n;
}

std::size_t diagnosis_bytes(const Diagnosis& d) {
  std::size_t n = text_bytes(d.verdict) + kEntryBytes * d.thresholds_overridden.size();
  for (const auto& c : d.caveats) n += text_bytes(c);
  for (const auto& step : d.path) {
    n += kEntryBytes + text_bytes(step.node) + text_bytes(step.question) +
         text_bytes(step.expression) + text_bytes(step.answer) + text_bytes(step.finding) +
         evidence_bytes(step.evidence);
    for (const auto& m : step.missing) n += text_bytes(m);
  }
  for (const auto& f : d.findings) {
    n += kEntryBytes + text_bytes(f.id) + text_bytes(f.title) + text_bytes(f.severity) +
         text_bytes(f.explanation) + text_bytes(f.recommendation) + text_bytes(f.detail) +
         text_bytes(f.false_if) + evidence_bytes(f.evidence);
    for (const auto& lab : f.labs) n += text_bytes(lab);
    for (const auto& line : f.lines)
      n += kEntryBytes + text_bytes(line.file) + text_bytes(line.what) + text_bytes(line.detail);
    if (f.estimate) n += text_bytes(f.estimate->model) + kEntryBytes * f.estimate->inputs.size();
  }
  return n;
}

}  // namespace

std::size_t launch_bytes(const Kernel& k) {
  std::size_t n = sizeof(Kernel) + text_bytes(k.name) + text_bytes(k.function) +
                  text_bytes(k.mangled_name) + text_bytes(k.nvtx_path) +
                  kEntryBytes * (k.metrics.size() + k.derived.size());
  if (k.diagnosis) n += diagnosis_bytes(*k.diagnosis);
  return n;
}

std::size_t launch_bytes(const Report& report) {
  std::size_t n = 0;
  for (const auto& v : report.variants) {
    for (const auto& k : v.kernels) n += launch_bytes(k);
    if (!report.program) continue;
    // A program's launches of one outcome are read back with one launch's diagnosis
    // (launch_columns_json): count what reading them will make, not what they hold now.
    const auto stored = stored_for(v.kernels);
    for (std::size_t i = 0; i < v.kernels.size(); ++i)
      if (v.kernels[i].diagnosis)
        n += diagnosis_bytes(*v.kernels[stored[i]].diagnosis) -
             diagnosis_bytes(*v.kernels[i].diagnosis);
  }
  return n;
}

json kernel_json(const Kernel& k) {
  json out = kernel_fields_json(k);
  if (k.diagnosis) out["diagnosis"] = diagnosis_json(*k.diagnosis);
  if (k.source) out["source"] = source_json(*k.source);
  return out;
}

Kernel read_kernel(const Reader& r) {
  Kernel k;
  k.name = r.str("name");
  k.function = r.str_or("function", "");
  k.mangled_name = r.str_or("mangled_name", "");
  k.launch_index = static_cast<int>(r.integer_or("launch_index", 0));
  k.nvtx_path = r.str_or("nvtx_path", "");
  if (r.has("attributes")) {
    const auto a = r.at("attributes");
    auto& s = k.attributes;
    s.registers_per_thread = static_cast<int>(a.whole_amount_or("registers_per_thread", 0));
    s.local_bytes_per_thread =
        static_cast<std::uint64_t>(a.whole_amount_or("local_bytes_per_thread", 0));
    s.static_shared_bytes = static_cast<std::uint64_t>(a.whole_amount_or("static_shared_bytes", 0));
    s.dynamic_shared_bytes =
        static_cast<std::uint64_t>(a.whole_amount_or("dynamic_shared_bytes", 0));
    s.block_threads = static_cast<int>(a.whole_amount_or("block_threads", 0));
    s.grid_blocks = static_cast<std::uint64_t>(a.whole_amount_or("grid_blocks", 0));
    s.max_active_blocks_per_sm = static_cast<int>(a.integer_or("max_active_blocks_per_sm", 0));
    s.theoretical_occupancy = a.num_or("theoretical_occupancy", 0);
    for (auto [key, field] : {std::pair{"spill_store_bytes", &StaticAttributes::spill_store_bytes},
                              std::pair{"spill_load_bytes", &StaticAttributes::spill_load_bytes},
                              std::pair{"stack_frame_bytes", &StaticAttributes::stack_frame_bytes}})
      if (a.has(key)) s.*field = static_cast<int>(a.integer(key));
  }
  k.metrics = r.number_map_or_empty("metrics");
  k.derived = r.number_map_or_empty("derived");
  if (r.has("diagnosis")) k.diagnosis = read_diagnosis(r.at("diagnosis"));
  if (r.has("source")) k.source = read_source(r.at("source"));
  return k;
}

bool same_outcome(const Diagnosis& a, const Diagnosis& b) {
  return outcome_key(a) == outcome_key(b);
}

json launch_columns_json(const std::vector<Kernel>& kernels) {
  json out = {{"count", kernels.size()}};
  if (kernels.empty()) return out;
  std::vector<json> rows;
  rows.reserve(kernels.size());
  for (const auto& k : kernels) rows.push_back(kernel_fields_json(k));
  std::vector<const json*> values(rows.size());
  for (auto it = rows[0].begin(); it != rows[0].end(); ++it) {
    if (it->is_object()) {
      out[it.key()] = columns_of(rows, it.key());
      continue;
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto field = rows[i].find(it.key());
      values[i] = field == rows[i].end() ? nullptr : &*field;
    }
    out[it.key()] = column(values);
  }
  // Fields the first launch lacks (a function name another launch knows): the same columns.
  for (const auto& row : rows)
    for (auto it = row.begin(); it != row.end(); ++it)
      if (!out.contains(it.key())) {
        for (std::size_t i = 0; i < rows.size(); ++i) {
          const auto field = rows[i].find(it.key());
          values[i] = field == rows[i].end() ? nullptr : &*field;
        }
        out[it.key()] = column(values);
      }

  json diagnoses = json::array(), diagnosis_of = json::array(), sources = json::array();
  const auto stored = stored_for(kernels);
  std::map<std::size_t, std::size_t> index_of;  // stored launch -> its index in `diagnoses`
  bool any_source = false;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const Kernel& k = kernels[i];
    any_source = any_source || k.source;
    sources.push_back(k.source ? source_json(*k.source) : json());
    if (!k.diagnosis) {
      diagnosis_of.push_back(nullptr);
      continue;
    }
    const auto [at, added] = index_of.emplace(stored[i], diagnoses.size());
    if (added) diagnoses.push_back(diagnosis_json(*kernels[stored[i]].diagnosis));
    diagnosis_of.push_back(at->second);
  }
  out["diagnoses"] = std::move(diagnoses);
  out["diagnosis_of"] = std::move(diagnosis_of);
  if (any_source) out["sources"] = std::move(sources);
  return out;
}

std::vector<Kernel> read_launch_columns(const Reader& r) {
  r.at("count");  // required
  const auto count = static_cast<std::size_t>(r.whole_amount_or("count", 0));
  std::vector<Kernel> kernels;
  if (count == 0) return kernels;
  // Every launch has an element here: the count is bounded by the input's own size.
  const auto of = r.at("diagnosis_of");
  if (!of.node().is_array() || of.node().size() != count)
    Reader::fail(of.where(),
                 "expected one entry for each of the " + std::to_string(count) + " launches");
  std::vector<Diagnosis> diagnoses;
  if (r.has("diagnoses"))
    r.each("diagnoses", [&](const Reader& d) { diagnoses.push_back(read_diagnosis(d)); });

  // A shared string or a stored diagnosis is copied into each launch: a few bytes of columns may
  // stand for kilobytes each. What reading makes of them is bounded before it is made (at most
  // what launch_bytes counts when the report is written, so what gpulab writes it reads back).
  std::size_t shared = sizeof(Kernel);
  for (const char* field : {"name", "function", "mangled_name", "nvtx_path"})
    if (r.has(field) && r.at(field).node().is_string())
      shared += text_bytes(r.at(field).node().get_ref<const std::string&>());
  std::vector<std::size_t> stored;
  for (const auto& d : diagnoses) stored.push_back(diagnosis_bytes(d));
  std::size_t bytes = 0;
  for (const auto& index : of.node()) {
    bytes += shared;
    if (index.is_number_integer() && index.get<std::int64_t>() >= 0 &&
        index.get<std::uint64_t>() < stored.size())
      bytes += stored[index.get<std::size_t>()];
    if (bytes > kMaxLaunchBytes)
      Reader::fail(r.where(), fmt::format("its launches would take more than {} GiB once read, the "
                                          "most gpulab reads (docs/report-schema.md)",
                                          kMaxLaunchBytes >> 30));
  }

  static const std::set<std::string> apart = {"count", "diagnoses", "diagnosis_of", "sources"};
  std::vector<FieldColumns> fields;
  for (auto it = r.node().begin(); it != r.node().end(); ++it) {
    if (apart.count(it.key())) continue;
    const auto field = r.at(it.key());
    FieldColumns& f = fields.emplace_back(FieldColumns{it.key(), {}, it->is_object()});
    if (!f.object) {
      f.columns.emplace_back(it.key(), field, count);
      continue;
    }
    for (auto sub = it->begin(); sub != it->end(); ++sub)
      f.columns.emplace_back(sub.key(), field.at(sub.key()), count);
  }
  kernels.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    json row = json::object();
    for (const auto& f : fields) {
      if (!f.object) {
        if (const json* v = f.columns[0].at(i)) row[f.name] = *v;
        continue;
      }
      json& object = row[f.name] = json::object();
      for (const auto& c : f.columns)
        if (const json* v = c.at(i)) object[c.name] = *v;
    }
    const std::string where = r.where() + "[" + std::to_string(i) + "]";
    Kernel& k = kernels.emplace_back(read_kernel(Reader(row, where)));
    const auto index = of.node()[i];
    if (!index.is_null()) {
      const Reader at(index, of.where() + "[" + std::to_string(i) + "]");
      const std::int64_t n = at.as_integer();
      if (n < 0 || static_cast<std::size_t>(n) >= diagnoses.size())
        Reader::fail(at.where(), "names no stored diagnosis");
      k.diagnosis = diagnoses[static_cast<std::size_t>(n)];
    }
  }
  if (r.has("sources")) {
    std::size_t i = 0;
    r.each("sources", [&](const Reader& s) {
      if (i >= count) Reader::fail(s.where(), "more sources than launches");
      if (!s.node().is_null()) kernels[i].source = read_source(s);
      ++i;
    });
  }
  return kernels;
}

}  // namespace gpulab::report
