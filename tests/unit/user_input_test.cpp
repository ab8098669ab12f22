// The values users type, read one way everywhere: the list splitter, NAME=VALUE, numbers, and the
// metrics options that read their lists with the same splitter.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reports/base/errors.hpp"
#include "reports/base/user_input.hpp"
#include "reports/metric_catalogue.hpp"
#include "unit/run_cli.hpp"

namespace gpulab {
namespace {

using Names = std::vector<std::string>;

// The message of the UsageError `f` throws, or "" when it throws none.
template <typename F>
std::string usage_error(F f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(UserInput, SplitListKeepsTheOrderGiven) {
  EXPECT_EQ(split_list("--variant", "tiled,naive,padded"), (Names{"tiled", "naive", "padded"}));
  EXPECT_EQ(split_list("--variant", "tiled"), Names{"tiled"});
}

TEST(UserInput, SplitListRefusesEmptyAndRepeatedItems) {
  EXPECT_EQ(usage_error([] { split_list("--variant", ""); }), "--variant: the list is empty");
  EXPECT_EQ(usage_error([] { split_list("--variant", "a,,b"); }),
            "--variant: 'a,,b' has an empty name in the list");
  EXPECT_NE(usage_error([] { split_list("--variant", ",a"); }), "");
  EXPECT_NE(usage_error([] { split_list("--variant", "a,"); }), "");
  EXPECT_EQ(usage_error([] { split_list("--labs", "a,b,a"); }),
            "--labs: 'a,b,a' names 'a' twice in the list");
  EXPECT_EQ(usage_error([] { split_list("", "a,a"); }), "'a,a' names 'a' twice in the list");
}

TEST(UserInput, SplitListTakesItemsAsTyped) {
  EXPECT_EQ(split_list("--variant", "a, b"), (Names{"a", " b"}));
  // Profiled functions are variants too, and their names hold commas of their own.
  EXPECT_EQ(split_list("--variant", "reduce_kernel<512, 1>,void f(float*, int),g"),
            (Names{"reduce_kernel<512, 1>", "void f(float*, int)", "g"}));
  EXPECT_EQ(split_list("--variant", "k<{lambda(int, float)#1}>"),
            Names{"k<{lambda(int, float)#1}>"});
  EXPECT_EQ(split_list("--variant", "a>,b"), (Names{"a>", "b"}));  // a stray closer opens nothing
  EXPECT_EQ(split_list("--variant", "a<b,c"), Names{"a<b,c"});     // an unclosed one holds the rest
  EXPECT_EQ(split_list("--variant", "a,A"), (Names{"a", "A"}));
}

TEST(UserInput, SplitAssignmentNeedsBothSides) {
  const auto a = split_assignment("--param", "cols=8=9");
  EXPECT_EQ(a.name, "cols");
  EXPECT_EQ(a.value, "8=9");
  for (const char* bad : {"cols", "=8", "cols=", "", "="})
    EXPECT_EQ(usage_error([&] { split_assignment("--param", bad); }),
              std::string("--param: '") + bad + "' is not NAME=VALUE");
}

TEST(UserInput, NumbersAreWholeAndFinite) {
  EXPECT_EQ(parse_integer("--size", "-42"), -42);
  EXPECT_EQ(parse_number("--threshold", "0.25"), 0.25);
  for (const char* bad : {"", " 1", "1 ", "1e3", "0x10", "12abc"})
    EXPECT_NE(usage_error([&] { parse_integer("--size", bad); }), "") << "'" << bad << "'";
  EXPECT_NE(usage_error([] { parse_integer("--size", "99999999999999999999"); }).find("64-bit"),
            std::string::npos);
  for (const char* bad :
       {"", " 1", "nan", "inf", "-inf", "infinity", "1x", "1e999", "0x10", "0x1p-1"})
    EXPECT_NE(usage_error([&] { parse_number("--threshold", bad); }), "") << "'" << bad << "'";
}

// strtod reads hexadecimal, as the integers do not: a number is decimal, as they are.
TEST(UserInput, NumbersAreDecimal) {
  EXPECT_EQ(parse_number("--threshold", "1e3"), 1000);
  EXPECT_EQ(parse_number("--threshold", "-.5"), -0.5);
  EXPECT_EQ(parse_number("--threshold", "+2.5E-1"), 0.25);
  EXPECT_EQ(usage_error([] { parse_number("--fail-on-regression", "0x10"); }),
            "--fail-on-regression: '0x10' is not a decimal number");
  EXPECT_EQ(usage_error([] { parse_number("", "-0X1P-1"); }), "'-0X1P-1' is not a decimal number");
  EXPECT_EQ(usage_error([] { parse_number("", "nan(1)"); }), "'nan(1)' is not a finite number");
}

TEST(MetricsOption, SetNamesAndListsResolveToCuptiNames) {
  namespace metrics = report::metrics;
  EXPECT_EQ(metrics::resolve("--metrics", "basic"), metrics::metric_set("basic"));
  EXPECT_TRUE(metrics::resolve("--metrics", "none").empty());
  // Short and CUPTI names, sorted, each once however it was named.
  EXPECT_EQ(metrics::resolve("--metrics", "dram_write,dram_read,dram__bytes_read.sum"),
            (Names{metrics::name::dram_read, metrics::name::dram_write}));
  // A Perfworks name outside the catalogue passes, for CUPTI to judge.
  EXPECT_EQ(metrics::resolve("--metrics", "lts__t_sectors_srcunit_tex.sum"),
            Names{"lts__t_sectors_srcunit_tex.sum"});
}

TEST(MetricsOption, ListsFollowTheListRules) {
  namespace metrics = report::metrics;
  const auto error = [](const std::string& spec) {
    return usage_error([&] { metrics::resolve("--metrics", spec); });
  };
  EXPECT_EQ(error("dram_read,,dram_write"),
            "--metrics: 'dram_read,,dram_write' has an empty name in the list");
  EXPECT_EQ(error("dram_read,"), "--metrics: 'dram_read,' has an empty name in the list");
  EXPECT_EQ(error("dram_read,dram_read"),
            "--metrics: 'dram_read,dram_read' names 'dram_read' twice in the list");
  EXPECT_NE(error("dram_read, dram_write").find("unknown metric ' dram_write'"), std::string::npos);
  EXPECT_NE(error(" basic").find("unknown metric ' basic'"), std::string::npos);
  EXPECT_NE(error("dram__bytes read").find("unknown metric 'dram__bytes read'"), std::string::npos);
  EXPECT_NE(error("basic,full").find("unknown metric 'basic'"), std::string::npos)
      << "a set is the whole value, not a list item";
  EXPECT_EQ(usage_error([] {
              metrics::resolve("--check-metrics", "nosuch");
            }).rfind("--check-metrics: unknown metric 'nosuch'", 0),
            0u);
}

// Suggestions as git makes them: for a slip (a letter wrong, missing, extra or two swapped, a
// prefix), never for a name far from every known one.
TEST(DidYouMean, CloseNamesOnlyAndAllEquallyClose) {
  const std::vector<std::string> labs{"transpose", "reduction", "streams", "spill", "matmul"};
  EXPECT_EQ(did_you_mean("transpsoe", labs), "did you mean 'transpose'?");
  EXPECT_EQ(did_you_mean("trans", labs), "did you mean 'transpose'?");
  EXPECT_EQ(did_you_mean("spil", labs), "did you mean 'spill'?");
  EXPECT_EQ(did_you_mean("xyzzy", labs), "");
  EXPECT_EQ(did_you_mean("transpose", labs), "") << "a known name is no slip";
  EXPECT_EQ(did_you_mean("pad", {"padded", "pads"}), "did you mean 'padded' or 'pads'?");
  EXPECT_EQ(did_you_mean(std::string(200, 'x'), labs), "");
}

// The command line's own mistakes, in gpulab's words, with a suggestion when one is close.
TEST(DidYouMean, CommandsOptionsLabsAndVariantsSuggestAndDistantOnesDoNot) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const Case cases[] = {
      {{"rnu"}, "unknown command 'rnu'; did you mean 'run'?"},
      {{"frobnicate"}, "unknown command 'frobnicate' (see gpulab --help)"},
      {{"run", "transpose", "--repaet", "3"},
       "unknown option '--repaet' for run; did you mean '--repeat'?"},
      {{"run", "transpose", "--zzzzzz"}, "unknown option '--zzzzzz' for run (see"},
      {{"run", "transpsoe"}, "unknown lab 'transpsoe' (did you mean 'transpose'? labs:"},
      {{"run", "qqqq"}, "unknown lab 'qqqq' (labs:"},
      {{"run", "transpose", "--variant", "padd"},
       "has no variant 'padd' (did you mean 'padded'? variants:"},
      {{"run", "transpose", "--variant", "xyzzy"}, "has no variant 'xyzzy' (variants:"},
      {{"list", "extra"}, "unexpected argument 'extra' for list"},
  };
  for (const auto& c : cases) {
    const auto r = test::run_cli(c.args);
    EXPECT_EQ(r.code, 2) << c.args[0];
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace gpulab
