#include "reports/kernel_name.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <map>
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
  if (width < 8) return name.substr(0, width - 1) + "\u2026";
  // The head says whose kernel it is (the library's namespace), the tail which one: library
  // kernels that share a long head (cuBLAS's sm80_xmma_gemm_..., CUB's policy types) differ in
  // their last template arguments, so the middle goes.
  std::size_t head = (width - 1) * 2 / 5;
  // The function's own name stays whole where it is short enough: the head then reaches the '<'
  // that opens its template arguments ("cub::DeviceReduceKernel<…, float*>").
  if (const std::size_t open = name.find('<');
      open != std::string::npos && open + 1 > head && open + 1 <= (width - 1) * 3 / 5)
    head = open + 1;
  const std::size_t tail = width - 1 - head;
  return name.substr(0, head) + "\u2026" + name.substr(name.size() - tail);
}

std::vector<std::string> shortened_apart(const std::vector<std::string>& names, std::size_t width) {
  std::vector<std::string> shown;
  std::map<std::string, std::vector<std::size_t>> readers;  // a shown form -> the names it shows
  for (std::size_t i = 0; i < names.size(); ++i) {
    shown.push_back(shortened(names[i], width));
    readers[shown.back()].push_back(i);
  }
  if (width < 12) return shown;
  const auto first_difference = [](const std::string& a, const std::string& b) {
    std::size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    return i;
  };
  for (const auto& [form, group] : readers)
    for (const std::size_t i : group) {
      const std::string& name = names[i];
      std::size_t from = name.size();
      for (const std::size_t j : group)
        if (names[j] != name) from = std::min(from, first_difference(name, names[j]));
      if (from == name.size()) continue;  // the same name twice: nothing tells them apart
      // The head, an ellipsis, the name from a few characters before the difference, and an
      // ellipsis where that runs past the width.
      const std::size_t head = (width - 2) / 3, room = width - head - 1;
      const std::size_t start = std::max(head, from > 2 ? from - 2 : 0);
      if (start <= head) continue;  // it differs within the head, which shows it already
      std::string window = name.substr(start);
      if (window.size() > room) window = window.substr(0, room - 1) + "\u2026";
      shown[i] = name.substr(0, head) + "\u2026" + window;
    }
  return shown;
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
