// Which launches `gpulab profile --nvtx-include/--nvtx-exclude` selects by the NVTX ranges open
// around them, in Nsight Compute's syntax (docs/profile.md, "NVTX ranges"):
//
//   push/pop ranges  A/        A anywhere on the launching thread's stack of its domain
//                    A/B       B pushed directly above A          [A   A at the bottom
//                    A/+/B     one range between them             B]   B at the top
//                    A/*/B     any number (0 or more) between them
//   start/end ranges A         A open in the process;  A,B  both open
//   both             Domain@…  a domain other than the default; regex:…  names are ECMAScript
//                    regular expressions, searched; \ makes the next character literal
//
// A launch is selected when no include is given or any include matches it, and no exclude
// does. The parser refuses a malformed expression with one line that says at which character;
// the injection library (inject/) matches each launch against the parsed expressions.
#pragma once

#include <map>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab::report {

// The ranges open when a kernel is launched, by domain ("" is the default domain): the
// launching thread's push/pop stack (bottom first) and the process's open start/end ranges.
struct NvtxOpen {
  std::map<std::string, std::vector<std::string>> stacks;
  std::map<std::string, std::vector<std::string>> started;
};

// One name of an expression: a literal, or a regular expression searched in the range's name.
class NvtxName {
 public:
  NvtxName(std::string text, bool regex);
  bool matches(const std::string& name) const;

 private:
  std::string text_;
  bool regex_ = false;
  std::regex pattern_;
};

// One --nvtx-include or --nvtx-exclude expression, parsed.
class NvtxExpression {
 public:
  // How far apart two consecutive names of a push/pop expression are on the stack.
  enum class Gap { adjacent, one, any };

  // Throws UsageError: `option "EXPR": what is wrong at character N`.
  static NvtxExpression parse(std::string_view text, std::string_view option);

  bool matches(const NvtxOpen& open) const;

 private:
  bool stack_matches(const std::vector<std::string>& stack) const;

  NvtxName domain_{"", false};  // "": the default domain
  bool push_pop_ = false;
  std::vector<NvtxName> names_;
  std::vector<Gap> gaps_;  // push/pop: gaps_[i] lies between names_[i] and names_[i + 1]
  bool at_bottom_ = false;
  bool at_top_ = false;
};

// A launch's ranges as one path, outermost first: the names joined by '/', a '/' or '\' inside a
// name escaped with '\' (the expressions' notation). `nvtx_path_parts` takes one apart.
std::string nvtx_path(const std::vector<std::string>& ranges);
std::vector<std::string> nvtx_path_parts(std::string_view path);

// Every --nvtx-include and --nvtx-exclude of a profile.
class NvtxFilter {
 public:
  NvtxFilter() = default;
  // Throws UsageError for the first malformed expression.
  NvtxFilter(const std::vector<std::string>& includes, const std::vector<std::string>& excludes);

  bool empty() const { return includes_.empty() && excludes_.empty(); }
  bool selects(const NvtxOpen& open) const;

 private:
  std::vector<NvtxExpression> includes_;
  std::vector<NvtxExpression> excludes_;
};

}  // namespace gpulab::report
