#include "app/output_names.hpp"

#include <limits.h>
#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "app/job_rank.hpp"
#include "reports/base/errors.hpp"

namespace gpulab::app {
namespace {

// The variables the template's %q{} name, in order.
std::vector<std::string> variables_named(const std::string& text) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '%') continue;
    if (text[i + 1] == '%') {
      ++i;
      continue;
    }
    if (text[i + 1] != 'q' || i + 2 >= text.size() || text[i + 2] != '{') continue;
    const std::size_t end = text.find('}', i + 3);
    if (end == std::string::npos) break;
    names.push_back(text.substr(i + 3, end - i - 3));
    i = end;
  }
  return names;
}

bool holds(const std::string& text, char code) {
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '%') continue;
    if (text[i + 1] == code) return true;
    ++i;  // "%%" and the other codes
  }
  return false;
}

}  // namespace

NameSources this_process() {
  NameSources s;
  s.variable = [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
  s.pid = static_cast<long>(::getpid());
  char host[HOST_NAME_MAX + 1] = {};
  if (::gethostname(host, sizeof host - 1) == 0) s.host = host;
  return s;
}

std::string expand_output_name(const std::string& what, const std::string& text,
                               const NameSources& sources) {
  const auto refuse = [&](const std::string& why) {
    return UsageError(fmt::format("{} '{}': {}", what, text, why));
  };
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 1 == text.size()) throw refuse("a '%' ends it: write %% for a '%', or %p, %h, %q{ENV}");
    const char code = text[++i];
    if (code == '%') {
      out += '%';
    } else if (code == 'p') {
      out += std::to_string(sources.pid);
    } else if (code == 'h') {
      if (sources.host.empty()) throw refuse("%h: this host's name is unknown");
      out += sources.host;
    } else if (code == 'q') {
      const std::size_t end = text.find('}', i + 1);
      if (i + 1 >= text.size() || text[i + 1] != '{' || end == std::string::npos)
        throw refuse(fmt::format("%q at character {} needs a variable in braces: %q{{RANK}}", i));
      const std::string name = text.substr(i + 2, end - i - 2);
      if (name.empty()) throw refuse("%q{} names no variable");
      const auto value = sources.variable(name);
      if (!value) throw refuse(fmt::format("%q{{{}}}: {} is not set", name, name));
      out += *value;
      i = end;
    } else {
      throw refuse(
          fmt::format("'%{}' at character {} is not a template: %p, %h, %q{{ENV}}, %%", code, i));
    }
  }
  return out;
}

bool names_one_file_per_rank(const std::string& text) {
  if (holds(text, 'p')) return true;
  const auto names = variables_named(text);
  const auto named = [&names](const char* variable) {
    for (const auto& n : names)
      if (n == variable) return true;
    return false;
  };
  for (const auto& v : rank_variables()) {
    if (named(v.rank)) return true;
    if (holds(text, 'h') && named(v.local_rank)) return true;
  }
  return false;
}

void refuse_one_file_for_all_ranks(const std::string& what, const std::string& text,
                                   const std::optional<report::RankInfo>& rank) {
  if (!rank || rank->world_size.value_or(1) <= 1 || text == "-" || names_one_file_per_rank(text))
    return;
  std::string variable = "RANK";
  for (const auto& v : rank_variables())
    if (rank->launcher == v.launcher) variable = v.rank;
  throw UsageError(fmt::format(
      "{} '{}': each of the job's {} ranks (by {}'s variables) would write this one file: name "
      "one per rank with %q{{{}}} or %p",
      what, text, *rank->world_size, rank->launcher, variable));
}

}  // namespace gpulab::app
