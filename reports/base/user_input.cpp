#include "reports/base/user_input.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "reports/base/errors.hpp"

namespace gpulab {
namespace {

// "--repeat: " before a message, or nothing where the caller (a CLI11 validator) names the
// option itself.
std::string lead(const std::string& what) { return what.empty() ? "" : what + ": "; }

// The first comma at or after `start` outside brackets, or npos: the commas of a C++ function
// name ("f<int, 2>(float*, int)", "{lambda(int, float)#1}") belong to the name.
std::size_t next_separator(const std::string& text, std::size_t start) {
  int depth = 0;
  for (std::size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    if ((c == '>' || c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    if (c == ',' && depth == 0) return i;
  }
  return std::string::npos;
}

}  // namespace

std::vector<std::string> split_list(const std::string& what, const std::string& text) {
  if (text.empty()) throw UsageError(fmt::format("{}the list is empty", lead(what)));
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const auto comma = next_separator(text, start);
    items.push_back(text.substr(start, comma == std::string::npos ? comma : comma - start));
    if (items.back().empty())
      throw UsageError(fmt::format("{}'{}' has an empty name in the list", lead(what), text));
    if (std::find(items.begin(), items.end() - 1, items.back()) != items.end() - 1)
      throw UsageError(
          fmt::format("{}'{}' names '{}' twice in the list", lead(what), text, items.back()));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

Assignment split_assignment(const std::string& what, const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError(fmt::format("{}'{}' is not NAME=VALUE", lead(what), text));
  return {text.substr(0, eq), text.substr(eq + 1)};
}

// strtoll and strtod skip leading white space; a value typed with a space in front is refused
// rather than read past, so that what is read is the whole text.
std::int64_t parse_integer(const std::string& what, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long long v = text.empty() || std::isspace(static_cast<unsigned char>(text[0]))
                          ? 0
                          : std::strtoll(text.c_str(), &end, 10);
  if (end == nullptr || end == text.c_str() || *end != '\0')
    throw UsageError(fmt::format("{}'{}' is not an integer", lead(what), text));
  if (errno == ERANGE)
    throw UsageError(fmt::format("{}'{}' is beyond the 64-bit integer range", lead(what), text));
  return v;
}

double parse_number(const std::string& what, const std::string& text) {
  char* end = nullptr;
  const double v = text.empty() || std::isspace(static_cast<unsigned char>(text[0]))
                       ? 0
                       : std::strtod(text.c_str(), &end);
  if (end == nullptr || end == text.c_str() || *end != '\0')
    throw UsageError(fmt::format("{}'{}' is not a number", lead(what), text));
  if (!std::isfinite(v))
    throw UsageError(fmt::format("{}'{}' is not a finite number", lead(what), text));
  // strtod also reads hexadecimal ("0x10" is 16, "0x1p-1" 0.5), which the integers refuse:
  // a number is decimal digits, a point and an exponent.
  if (text.find_first_not_of("0123456789+-.eE") != std::string::npos)
    throw UsageError(fmt::format("{}'{}' is not a decimal number", lead(what), text));
  return v;
}

namespace {

// Levenshtein distance, with a swap of two neighbours counting as one edit (a common slip).
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string did_you_mean(const std::string& typed, const std::vector<std::string>& known) {
  // Names are short; a long typed text is no slip for one of them (and the table grows with it).
  if (typed.empty() || typed.size() > 64) return "";
  std::size_t best = std::numeric_limits<std::size_t>::max();
  std::vector<std::string> closest;
  for (const auto& name : known) {
    if (name == typed) continue;
    const std::size_t limit = name.size() >= 8 ? 3 : 2;
    const bool prefix = typed.size() >= 3 && name.rfind(typed, 0) == 0;
    const std::size_t d = prefix ? 1 : edit_distance(typed, name);
    if (d > limit) continue;
    if (d < best) {
      best = d;
      closest.clear();
    }
    if (d == best) closest.push_back(name);
  }
  if (closest.empty() || closest.size() > 3) return "";
  std::string out = "did you mean '" + closest[0] + "'";
  for (std::size_t i = 1; i < closest.size(); ++i)
    out += (i + 1 == closest.size() ? " or '" : ", '") + closest[i] + "'";
  return out + "?";
}

}  // namespace gpulab
