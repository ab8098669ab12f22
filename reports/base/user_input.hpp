// The values users type on the command line, read one way everywhere: comma-separated lists,
// NAME=VALUE assignments, integers and finite numbers. Every function throws UsageError with
// a one-line message that starts with `what` (the option, e.g. "--variant: "; nothing when
// `what` is empty) and quotes the text as typed, so that an error never shows a value other
// than the one given.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpulab {

// "a,b,c" → {"a", "b", "c"}, in the order given; a comma inside brackets (<>, (), [], {}) is
// part of its item, so that a C++ function name is one item ("f<int, 2>,g"). An empty text, or an
// empty item ("a,,b", "a,"), is an error: a list that names nothing selects nothing, and must not
// pass for "everything". So is an item named twice ("a,b,a"), most likely a slip for another name.
// Items are taken as typed: " b" (white space around a comma) is not "b".
std::vector<std::string> split_list(const std::string& what, const std::string& text);

struct Assignment {
  std::string name;
  std::string value;
};

// "NAME=VALUE", both sides non-empty.
Assignment split_assignment(const std::string& what, const std::string& text);

// A whole decimal integer within the 64-bit range ("1e3", "12abc" and "" are not integers).
std::int64_t parse_integer(const std::string& what, const std::string& text);

// A whole decimal number that is finite ("nan", "inf", "1x" and hexadecimal "0x10" are
// refused).
double parse_number(const std::string& what, const std::string& text);

// For a mistyped name, the known names it was likely meant to be, as git suggests them: "did you
// mean 'transpose'?" (two or three: "did you mean 'pad' or 'padded'?"), or "" when none is close
// (edit distance at most 2, 3 for names of 8 characters or more; or `typed` begins one of them).
std::string did_you_mean(const std::string& typed, const std::vector<std::string>& known);

}  // namespace gpulab
