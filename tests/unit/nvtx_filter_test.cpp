// --nvtx-include / --nvtx-exclude: Nsight Compute's expressions, each example of its
// documentation ("NVTX Filtering") matched against the ranges open at a launch.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "reports/base/errors.hpp"
#include "reports/nvtx_filter.hpp"
#include "unit/sanitized.hpp"

namespace gpulab::report {
namespace {

// A launch inside the default domain's push/pop stack `stack` (bottom first).
NvtxOpen pushed(std::vector<std::string> stack, const std::string& domain = "") {
  NvtxOpen open;
  open.stacks[domain] = std::move(stack);
  return open;
}

NvtxOpen started(std::vector<std::string> ranges, const std::string& domain = "") {
  NvtxOpen open;
  open.started[domain] = std::move(ranges);
  return open;
}

bool matches(const std::string& expression, const NvtxOpen& open) {
  return NvtxExpression::parse(expression, "--nvtx-include").matches(open);
}

std::string refusal(const std::string& expression) {
  try {
    NvtxExpression::parse(expression, "--nvtx-include");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(NvtxFilter, PushPopRangeAnywhereOnTheStack) {
  // ncu --nvtx-include "A_range/": push/pop range A_range of the default domain.
  EXPECT_TRUE(matches("A_range/", pushed({"A_range"})));
  EXPECT_TRUE(matches("A_range/", pushed({"outer", "A_range", "inner"})));
  EXPECT_FALSE(matches("A_range/", pushed({"B range"})));
  EXPECT_FALSE(matches("A_range/", pushed({})));
  // The trailing '/' is what makes it push/pop: without it, a start/end range.
  EXPECT_FALSE(matches("A_range", pushed({"A_range"})));
  EXPECT_TRUE(matches("A_range", started({"A_range"})));
  EXPECT_FALSE(matches("A_range/", started({"A_range"})));
}

TEST(NvtxFilter, DomainsAreTheirOwn) {
  // ncu --nvtx-include "Domain-A@A_range/": push/pop range A_range of Domain-A.
  EXPECT_TRUE(matches("Domain-A@A_range/", pushed({"A_range"}, "Domain-A")));
  EXPECT_FALSE(matches("Domain-A@A_range/", pushed({"A_range"})));
  EXPECT_FALSE(matches("A_range/", pushed({"A_range"}, "Domain-A")));
  // Names may hold spaces.
  EXPECT_TRUE(matches("Domain B@B range/", pushed({"B range"}, "Domain B")));
}

TEST(NvtxFilter, BottomAndTopOfTheStack) {
  // ncu --nvtx-include "[A_range": A_range at the bottom of the stack.
  EXPECT_TRUE(matches("[A_range", pushed({"A_range", "B range"})));
  EXPECT_FALSE(matches("[A_range", pushed({"outer", "A_range"})));
  // "Range Z]": at the top.
  EXPECT_TRUE(matches("Range Z]", pushed({"A_range", "Range Z"})));
  EXPECT_FALSE(matches("Range Z]", pushed({"Range Z", "inner"})));
  EXPECT_TRUE(matches("[A_range/Range Z]", pushed({"A_range", "Range Z"})));
  EXPECT_FALSE(matches("[A_range/Range Z]", pushed({"A_range", "x", "Range Z"})));
}

TEST(NvtxFilter, RangesBetweenTwoNames) {
  // "A_range/*/B range": zero or more ranges between, A_range below B range.
  EXPECT_TRUE(matches("A_range/*/B range", pushed({"A_range", "B range"})));
  EXPECT_TRUE(matches("A_range/*/B range", pushed({"A_range", "x", "y", "B range"})));
  EXPECT_FALSE(matches("A_range/*/B range", pushed({"B range", "A_range"})));
  // "B range/+/Range D": exactly one between.
  EXPECT_TRUE(matches("B range/+/Range D", pushed({"B range", "C", "Range D"})));
  EXPECT_FALSE(matches("B range/+/Range D", pushed({"B range", "Range D"})));
  EXPECT_FALSE(matches("B range/+/Range D", pushed({"B range", "C", "C2", "Range D"})));
  // "A_range/B range": B range directly above A_range.
  EXPECT_TRUE(matches("A_range/B range", pushed({"o", "A_range", "B range", "i"})));
  EXPECT_FALSE(matches("A_range/B range", pushed({"A_range", "x", "B range"})));
  // "[A_range/+/Range Z" and "Range C/*/Range Z]" from the quantifier table.
  EXPECT_TRUE(matches("[A_range/+/Range Z", pushed({"A_range", "m", "Range Z", "i"})));
  EXPECT_TRUE(matches("Range C/*/Range Z]", pushed({"Range C", "Range Z"})));
  EXPECT_FALSE(matches("Range C/*/Range Z]", pushed({"Range C", "Range Z", "i"})));
  // A later occurrence of the first name can be the one that matches.
  EXPECT_TRUE(matches("a/b]", pushed({"a", "x", "a", "b"})));
}

TEST(NvtxFilter, StartEndListsNeedEveryRangeOpen) {
  // "A_range,B range": inside both start/end ranges.
  EXPECT_TRUE(matches("A_range,B range", started({"B range", "A_range"})));
  EXPECT_FALSE(matches("A_range,B range", started({"A_range"})));
  EXPECT_TRUE(matches("Domain B@B range,Range Z", started({"Range Z", "B range"}, "Domain B")));
}

TEST(NvtxFilter, IncludesAreAlternativesExcludesWin) {
  NvtxOpen a = started({"A_range"});
  NvtxOpen b = started({"B range"});
  NvtxOpen both = started({"A_range", "B range"});
  // --nvtx-include "A_range" --nvtx-include "B range": inside either.
  const NvtxFilter either({"A_range", "B range"}, {});
  EXPECT_TRUE(either.selects(a));
  EXPECT_TRUE(either.selects(b));
  EXPECT_FALSE(either.selects(NvtxOpen{}));
  // --nvtx-exclude "A_range": every launch but those inside A_range.
  const NvtxFilter but_a({}, {"A_range"});
  EXPECT_FALSE(but_a.selects(a));
  EXPECT_TRUE(but_a.selects(b));
  EXPECT_TRUE(but_a.selects(NvtxOpen{}));
  // --nvtx-include "B range" --nvtx-exclude "A_range".
  const NvtxFilter b_not_a({"B range"}, {"A_range"});
  EXPECT_TRUE(b_not_a.selects(b));
  EXPECT_FALSE(b_not_a.selects(both));
  // --nvtx-include "A_range/" --nvtx-exclude "B range]".
  const NvtxFilter push({"A_range/"}, {"B range]"});
  EXPECT_TRUE(push.selects(pushed({"A_range", "C"})));
  EXPECT_FALSE(push.selects(pushed({"A_range", "B range"})));
  EXPECT_TRUE(NvtxFilter().selects(NvtxOpen{}));
  EXPECT_TRUE(NvtxFilter().empty());
}

TEST(NvtxFilter, RegularExpressions) {
  // "regex:Domain[A-Z]@Range[0-9]/".
  EXPECT_TRUE(matches("regex:Domain[A-Z]@Range[0-9]/", pushed({"Range7"}, "DomainQ")));
  EXPECT_FALSE(matches("regex:Domain[A-Z]@Range[0-9]/", pushed({"RangeX"}, "DomainQ")));
  EXPECT_FALSE(matches("regex:Domain[A-Z]@Range[0-9]/", pushed({"Range7"})));
  EXPECT_TRUE(matches("regex:iter_[0-9]+/", pushed({"train", "iter_12"})));
  // "regex:[0-9]domainA@/[0-9]rangeA,RangeC[0-9/]": "/[" and "/]" keep the brackets the
  // expression's own.
  EXPECT_TRUE(matches("regex:[0-9]domainA@/[0-9]rangeA,RangeC[0-9/]",
                      started({"RangeC4", "7rangeA"}, "3domainA")));
  EXPECT_FALSE(matches("regex:[0-9]domainA@/[0-9]rangeA,RangeC[0-9/]",
                       started({"RangeCx", "7rangeA"}, "3domainA")));
  // Otherwise '[' first and ']' last are the stack's bottom and top, as without regex:.
  EXPECT_TRUE(matches("regex:[fwd.*", pushed({"fwd_1", "x"})));
  EXPECT_FALSE(matches("regex:[fwd.*", pushed({"x", "fwd_1"})));
  // An escape stays the regular expression's own: \. is a dot, not any character.
  EXPECT_TRUE(matches("regex:a\\.b/", pushed({"a.b"})));
  EXPECT_FALSE(matches("regex:a\\.b/", pushed({"axb"})));
}

TEST(NvtxFilter, EscapedQuantifiersAreCharacters) {
  // --nvtx-include "A_range\[i\]": the start/end range named A_range[i].
  EXPECT_TRUE(matches("A_range\\[i\\]", started({"A_range[i]"})));
  EXPECT_TRUE(matches("a\\/b/", pushed({"a/b"})));
  EXPECT_FALSE(matches("a\\/b/", pushed({"a", "b"})));
  EXPECT_TRUE(matches("mail\\@host/", pushed({"mail@host"})));
  EXPECT_TRUE(matches("x\\,y", started({"x,y"})));
  EXPECT_TRUE(matches("back\\\\slash/", pushed({"back\\slash"})));
  // '*' and '+' inside a name are characters.
  EXPECT_TRUE(matches("a*b/", pushed({"a*b"})));
}

// An expression of many '*' on a deep stack is one pass per name, not one per way to place them:
// here C(128, 6), about 5e9 placements, none of which matches.
TEST(NvtxFilter, ManyWildcardsOnADeepStackStayFast) {
  std::vector<std::string> stack(128, "x");
  const auto started = std::chrono::steady_clock::now();
  EXPECT_FALSE(matches("x/*/x/*/x/*/x/*/x/*/x/*/y", pushed(stack)));
  stack.back() = "y";
  EXPECT_TRUE(matches("x/*/x/*/x/*/x/*/x/*/x/*/y", pushed(stack)));
  EXPECT_TRUE(matches("[x/*/x/+/x/*/y]", pushed(stack)));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_LT(seconds, test::kSanitized ? 10.0 : 1.0);
}

TEST(NvtxFilter, MalformedExpressionsSayWhere) {
  EXPECT_EQ(refusal(""),
            "--nvtx-include \"\": an empty expression (name a range: A/ for "
            "push/pop, A for start/end)");
  EXPECT_EQ(refusal("A//B"), "--nvtx-include \"A//B\": an empty range name at character 3");
  EXPECT_EQ(refusal("/A"), "--nvtx-include \"/A\": an empty range name at character 1");
  EXPECT_EQ(refusal("@A/"),
            "--nvtx-include \"@A/\": an empty domain name before '@' at "
            "character 1");
  EXPECT_EQ(refusal("D@"), "--nvtx-include \"D@\": no range name after '@' at character 2");
  EXPECT_EQ(refusal("D1@A,D2@B"),
            "--nvtx-include \"D1@A,D2@B\": a second '@' (an expression names ranges of one "
            "domain) at character 8");
  EXPECT_EQ(refusal("A/B,C"),
            "--nvtx-include \"A/B,C\": ',' (start/end ranges) and '/' (push/pop ranges) in one "
            "expression at character 4");
  EXPECT_EQ(refusal("[A,B"),
            "--nvtx-include \"[A,B\": '[', ']' and a final '/' mark push/pop ranges, not a "
            "','-separated list of start/end ranges at character 3");
  EXPECT_EQ(refusal("*/A"),
            "--nvtx-include \"*/A\": a '*' needs a range name on each side (A/*/B) at "
            "character 1");
  EXPECT_EQ(refusal("A/*/"),
            "--nvtx-include \"A/*/\": a '*' needs a range name on each side (A/*/B) at "
            "character 3");
  EXPECT_EQ(refusal("A/*/+/B"),
            "--nvtx-include \"A/*/+/B\": a '+' needs a range name on each side (A/+/B) at "
            "character 5");
  EXPECT_EQ(refusal("A,*"),
            "--nvtx-include \"A,*\": '*' and '+' stand between push/pop ranges (A/*/B), not in "
            "a list of start/end ranges at character 3");
  EXPECT_EQ(refusal("A[1]/"),
            "--nvtx-include \"A[1]/\": '[' marks the bottom of the stack only at the start of "
            "the ranges (write \\[ for the character) at character 2");
  EXPECT_EQ(refusal("A]/"),
            "--nvtx-include \"A]/\": ']' marks the top of the stack only at the end of the "
            "ranges (write \\] for the character) at character 2");
  EXPECT_EQ(refusal("A\\"),
            "--nvtx-include \"A\\\": a '\\' with no character after it at character 2");
  EXPECT_EQ(refusal("[]"), "--nvtx-include \"[]\": no range name at character 2");
  EXPECT_NE(refusal("regex:a(/").find("'a(' is not a regular expression"), std::string::npos);
  EXPECT_NE(refusal("regex:a(/").find("at character 7"), std::string::npos);
  // The exclude option names itself.
  try {
    NvtxFilter({"ok/"}, {"x//y"});
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--nvtx-exclude \"x//y\": an empty range name at character 3");
  }
}

}  // namespace
}  // namespace gpulab::report
