#include "reports/source_json.hpp"

#include <algorithm>

namespace gpulab::report {

using nlohmann::json;

json source_json(const KernelSource& source) {
  std::vector<SourceLine> table;
  json lines = json::array(), instructions = json::array();
  for (const auto& i : source.instructions) {
    json entry = {{"offset", i.offset}, {"sass", i.sass}};
    if (i.where) {
      auto it = std::find(table.begin(), table.end(), *i.where);
      if (it == table.end()) {
        table.push_back(*i.where);
        json line = {{"file", i.where->file}, {"line", i.where->line}};
        if (!i.where->inlined_file.empty()) {
          line["inlined_file"] = i.where->inlined_file;
          line["inlined_line"] = i.where->inlined_line;
        }
        lines.push_back(std::move(line));
        it = table.end() - 1;
      }
      entry["line"] = it - table.begin();
    }
    if (!i.counters.empty()) entry["counters"] = i.counters;
    instructions.push_back(std::move(entry));
  }
  json out = {{"function", source.function},
              {"origin", source.origin},
              {"lines", std::move(lines)},
              {"instructions", std::move(instructions)}};
  if (!source.files.empty()) out["files"] = source.files;
  if (source.sampling)
    out["sampling"] = {{"period_cycles", source.sampling->period_cycles},
                       {"samples", source.sampling->samples},
                       {"dropped", source.sampling->dropped}};
  if (!source.notes.empty()) out["notes"] = source.notes;
  return out;
}

KernelSource read_source(const Reader& r) {
  KernelSource source;
  source.function = r.str("function");
  source.origin = r.str_or("origin", "");
  std::vector<SourceLine> table;
  if (r.has("lines"))
    r.each("lines", [&](const Reader& l) {
      SourceLine line;
      line.file = l.str("file");
      line.line = static_cast<int>(l.integer("line"));
      line.inlined_file = l.str_or("inlined_file", "");
      line.inlined_line = static_cast<int>(l.integer_or("inlined_line", 0));
      table.push_back(std::move(line));
    });
  r.each("instructions", [&](const Reader& i) {
    SassInstruction instruction;
    instruction.offset = i.at("offset").as_count();
    instruction.sass = i.str("sass");
    if (i.has("line")) {
      const auto index = i.at("line").as_count();
      if (index >= table.size())
        Reader::fail(i.where() + ".line", std::to_string(index) +
                                              " is not an entry of the line table (" +
                                              std::to_string(table.size()) + " lines)");
      instruction.where = table[index];
    }
    instruction.counters = i.number_map_or_empty("counters");
    source.instructions.push_back(std::move(instruction));
  });
  if (r.has("files")) {
    const auto files = r.at("files");
    if (!files.node().is_object()) Reader::fail(files.where(), "expected an object");
    for (auto it = files.node().begin(); it != files.node().end(); ++it)
      source.files[it.key()] = files.str(it.key());
  }
  if (r.has("sampling")) {
    const auto s = r.at("sampling");
    source.sampling = StallSampling{s.at("period_cycles").as_count(), s.at("samples").as_count(),
                                    s.at("dropped").as_count()};
  }
  if (r.has("notes"))
    r.each("notes", [&](const Reader& n) { source.notes.push_back(n.as_string()); });
  return source;
}

}  // namespace gpulab::report
