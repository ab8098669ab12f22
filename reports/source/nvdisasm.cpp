#include "reports/source/nvdisasm.hpp"

#include <optional>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "reports/base/errors.hpp"

namespace gpulab::report {
namespace {

// A function starts at its section's banner: //--------------------- .text.NAME ----------
const std::regex& function_banner() {
  static const std::regex re(R"re(^//-+ \.text\.(\S+) -+\s*$)re");
  return re;
}

// //## File "PATH", line N[ inlined at "PATH", line M]
const std::regex& line_annotation() {
  static const std::regex re(
      R"re(^\s*//## File "([^"]*)", line (\d+)(?: inlined at "([^"]*)", line (\d+))?)re");
  return re;
}

// /*0130*/   FADD R7, R2, R2 ;
const std::regex& instruction() {
  static const std::regex re(R"re(^\s*/\*([0-9a-fA-F]+)\*/\s+(.*?)\s*;?\s*(/\*.*\*/)?\s*$)re");
  return re;
}

}  // namespace

std::vector<KernelSource> read_nvdisasm(const std::string& listing) {
  std::vector<KernelSource> out;
  std::istringstream in(listing);
  std::optional<SourceLine> current;  // the line the next instructions belong to
  bool in_annotations = false;        // the previous line was an annotation too
  int number = 0;
  for (std::string text; std::getline(in, text);) {
    ++number;
    std::smatch m;
    if (std::regex_match(text, m, function_banner())) {
      KernelSource f;
      f.function = m[1].str();
      f.origin = "nvdisasm";
      out.push_back(std::move(f));
      current.reset();
      in_annotations = false;
      continue;
    }
    if (std::regex_search(text, m, line_annotation())) {
      // -gi prints an inlined instruction's chain innermost first: "A, line 1 inlined at B,
      // line 6", then "B, line 6". The first of a run of annotations is the instruction's own.
      if (!in_annotations) {
        SourceLine where;
        where.file = m[1].str();
        where.line = std::stoi(m[2].str());
        if (m[3].matched) {
          where.inlined_file = m[3].str();
          where.inlined_line = std::stoi(m[4].str());
        }
        current = where;
      }
      in_annotations = true;
      continue;
    }
    in_annotations = false;
    if (!std::regex_match(text, m, instruction())) continue;  // directives, labels, blank lines
    if (out.empty())
      throw UsageError(
          fmt::format("nvdisasm listing, line {}: an instruction before any function", number));
    SassInstruction i;
    i.offset = std::stoull(m[1].str(), nullptr, 16);
    i.sass = m[2].str();
    i.where = current;
    out.back().instructions.push_back(std::move(i));
  }
  return out;
}

void relative_to(std::vector<KernelSource>& functions, const std::string& root) {
  const std::string prefix = root + "/";
  const auto strip = [&prefix](std::string& file) {
    if (file.rfind(prefix, 0) == 0) file.erase(0, prefix.size());
  };
  for (auto& f : functions)
    for (auto& i : f.instructions)
      if (i.where) {
        strip(i.where->file);
        strip(i.where->inlined_file);
      }
}

}  // namespace gpulab::report
