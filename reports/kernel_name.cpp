#include "reports/kernel_name.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <string_view>

namespace gpulab::report {
namespace {

bool opens(char c) { return c == '<' || c == '(' || c == '[' || c == '{'; }
bool closes(char c) { return c == '>' || c == ')' || c == ']' || c == '}'; }

std::string_view without_parameters(std::string_view name) {
  if (name.empty() || name.back() != ')') return name;
  int depth = 0;
  for (std::size_t i = name.size(); i-- > 0;) {
    if (name[i] == ')') ++depth;
    if (name[i] == '(' && --depth == 0) return name.substr(0, i);
  }
  return name;
}

// Template functions demangle with their return type first; a space inside template arguments
// or "(anonymous namespace)" is not that separator.
std::string_view without_return_type(std::string_view name) {
  int depth = 0;
  std::size_t begin = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (opens(name[i])) ++depth;
    if (closes(name[i])) --depth;
    if (name[i] == ' ' && depth == 0) begin = i + 1;
  }
  return name.substr(begin);
}

// Removes every occurrence, template arguments included: "(anonymous namespace)::Plain" is
// "Plain" to the reader of a lab's source.
std::string without_own_namespaces(std::string_view name) {
  std::string out(name);
  for (std::string_view prefix : {"gpulab::labs::", "(anonymous namespace)::"}) {
    for (std::size_t at = out.find(prefix); at != std::string::npos; at = out.find(prefix, at))
      out.erase(at, prefix.size());
  }
  return out;
}

}  // namespace

std::string demangle(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !demangled) return mangled;
  return demangled.get();
}

std::string display_name(const std::string& demangled) {
  return without_own_namespaces(without_return_type(without_parameters(demangled)));
}

std::string shortened(const std::string& name, std::size_t width) {
  if (width == 0 || name.size() <= width) return name;  // kernel names are ASCII
  return name.substr(0, width - 1) + "\u2026";
}

std::string shown_function(const std::string& demangled, std::size_t width) {
  return shortened(display_name(demangled), width);
}

std::string base_name(const std::string& demangled) {
  const std::string shown = display_name(demangled);
  std::string_view name = shown;
  // Template arguments come last; the name ends at the '<' that opens them.
  if (!name.empty() && name.back() == '>') {
    int depth = 0;
    for (std::size_t i = name.size(); i-- > 0;) {
      if (name[i] == '>') ++depth;
      if (name[i] == '<' && --depth == 0) {
        name = name.substr(0, i);
        break;
      }
    }
  }
  const std::size_t scope = name.rfind("::");
  return std::string(scope == std::string_view::npos ? name : name.substr(scope + 2));
}

bool names_kernel(const std::string& selection, const std::string& label,
                  const std::string& demangled) {
  if (selection == label) return true;
  if (demangled.empty()) return false;
  return selection == display_name(demangled) || selection == base_name(demangled);
}

std::string kernel_heading(const std::string& label, const std::string& demangled) {
  if (demangled.empty()) return label;
  const std::string shown = shown_function(demangled);
  return shown == label ? label : label + " \u00b7 " + shown;
}

}  // namespace gpulab::report
