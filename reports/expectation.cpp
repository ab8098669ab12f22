#include "reports/expectation.hpp"

#include <algorithm>

namespace gpulab::report {
namespace {

bool contains(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

Expectation::Expectation(const char* finding) {
  if (finding && *finding) any_of.emplace_back(finding);
}

Expectation Expectation::one_of(std::initializer_list<const char*> findings, std::string why) {
  Expectation e;
  for (const char* f : findings) e.any_of.emplace_back(f);
  e.why = std::move(why);
  return e;
}

Expectation Expectation::excluding(std::initializer_list<const char*> findings, std::string why) {
  Expectation e;
  for (const char* f : findings) e.none_of.emplace_back(f);
  e.why = std::move(why);
  return e;
}

bool Expectation::accepts(const std::string& finding) const {
  return (any_of.empty() || contains(any_of, finding)) && !contains(none_of, finding);
}

std::string Expectation::text() const {
  std::string out;
  for (const auto& f : any_of) out += (out.empty() ? "" : "|") + f;
  for (const auto& f : none_of) out += (out.empty() ? "not " : ", not ") + f;
  return out.empty() ? "-" : out;
}

}  // namespace gpulab::report
