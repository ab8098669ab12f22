// What a lab expects the diagnosis to find of one of its variants (labs/harness/lab.hpp declares it
// next to the variant); reports/diagnosis/expectations.hpp judges a diagnosed report against it.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

namespace gpulab::report {

// What a variant's principal finding may be: one of `any_of` (empty: any finding, or none),
// and none of `none_of`. One finding is the common case; more than one is where the card
// decides (a kernel near a threshold that one card's roof puts on one side and another's on
// the other), and `why` then says so.
struct Expectation {
  std::vector<std::string> any_of;
  std::vector<std::string> none_of;
  std::string why;

  Expectation() = default;
  // One finding, or none expected when empty: the labs' variant tables write just the id.
  Expectation(const char* finding);  // NOLINT(google-explicit-constructor)
  static Expectation one_of(std::initializer_list<const char*> findings, std::string why);
  static Expectation excluding(std::initializer_list<const char*> findings, std::string why);

  bool empty() const { return any_of.empty() && none_of.empty(); }
  bool accepts(const std::string& finding) const;
  // As the self-test's "expected" column shows it: "a", "a|b", "not a, not b", or "-".
  std::string text() const;
};

}  // namespace gpulab::report
