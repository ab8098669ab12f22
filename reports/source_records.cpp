#include "reports/source_records.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

namespace gpulab::report {
namespace {

using nlohmann::json;

std::string line_of(const json& j) { return j.dump() + "\n"; }

json instruction_json(std::int64_t pid, std::int64_t launch_index, const SassInstruction& i) {
  json counters = json::object();
  for (const auto& [name, value] : i.counters)
    if (std::isfinite(value)) counters[name] = value;  // no JSON form for NaN or infinities
  json out = {{"record", "instruction"},
              {"pid", pid},
              {"launch_index", launch_index},
              {"offset", i.offset},
              {"counters", std::move(counters)}};
  if (!i.sass.empty()) out["sass"] = i.sass;
  if (i.where) {
    out["file"] = i.where->file;
    out["line"] = i.where->line;
    if (!i.where->inlined_file.empty()) {
      out["inlined_file"] = i.where->inlined_file;
      out["inlined_line"] = i.where->inlined_line;
    }
  }
  return out;
}

std::uint64_t unsigned_of(const RecordLine::Object& r, std::string_view key) {
  const std::int64_t v = r.integer(key);
  if (v < 0) throw NotARecord("a negative count or offset");
  return static_cast<std::uint64_t>(v);
}

}  // namespace

std::string to_lines(std::int64_t pid, std::int64_t launch_index, const KernelSource& source) {
  json head = {{"record", "source"},           {"pid", pid},
               {"launch_index", launch_index}, {"function", source.function},
               {"origin", source.origin},      {"instructions", source.instructions.size()},
               {"notes", source.notes}};
  if (source.sampling) {
    head["period_cycles"] = source.sampling->period_cycles;
    head["samples"] = source.sampling->samples;
    head["dropped"] = source.sampling->dropped;
  }
  std::string out = line_of(head);
  for (const auto& i : source.instructions) out += line_of(instruction_json(pid, launch_index, i));
  return out;
}

bool is_source_record(const std::string& type) { return type == "source" || type == "instruction"; }

void read_source_record(const std::string& type, const RecordLine::Object& r, std::int64_t pid,
                        RecordedSources& into) {
  const std::pair<std::int64_t, std::int64_t> key{pid, r.integer("launch_index")};
  if (type == "source") {
    KernelSource s;
    s.function = r.str("function");
    s.origin = r.str_or("origin", "cupti");
    s.notes = r.strings_or_empty("notes");
    if (r.has("period_cycles"))
      s.sampling = StallSampling{unsigned_of(r, "period_cycles"), unsigned_of(r, "samples"),
                                 unsigned_of(r, "dropped")};
    into.instructions_left[key] = unsigned_of(r, "instructions");
    into.by_launch[key] = std::move(s);  // a launch's later record replaces its earlier one
    return;
  }
  const auto left = into.instructions_left.find(key);
  if (left == into.instructions_left.end() || left->second == 0)
    throw NotARecord("an instruction that no source record announced");
  SassInstruction i;
  i.offset = unsigned_of(r, "offset");
  i.sass = r.str_or("sass", "");
  if (r.has("file"))
    i.where =
        SourceLine{r.str("file"), static_cast<int>(r.integer("line")), r.str_or("inlined_file", ""),
                   static_cast<int>(r.integer_or("inlined_line", 0))};
  i.counters = r.number_map_or_empty("counters");
  --left->second;
  into.by_launch[key].instructions.push_back(std::move(i));
}

}  // namespace gpulab::report
