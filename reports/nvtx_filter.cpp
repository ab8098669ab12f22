#include "reports/nvtx_filter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "reports/base/errors.hpp"

namespace gpulab::report {
namespace {

constexpr std::string_view kRegexPrefix = "regex:";

// One character of an expression: whether it is part of a name rather than of the syntax (a
// backslash before it, or a regular expression's bracket), whether a backslash came before it,
// and where it is (1-based, in the whole expression, for the messages).
struct Char {
  char c;
  bool escaped;
  std::size_t at;
  bool backslash = escaped;
};
using Chars = std::vector<Char>;

bool is(const Char& ch, char c) { return ch.c == c && !ch.escaped; }

class Parser {
 public:
  Parser(std::string_view text, std::string_view option) : text_(text), option_(option) {}

  [[noreturn]] void fail(const std::string& what, std::size_t at) const {
    throw UsageError(fmt::format("{} \"{}\": {} at character {}", option_, text_, what, at));
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw UsageError(fmt::format("{} \"{}\": {}", option_, text_, what));
  }

  // The expression's characters after any "regex:", escapes resolved.
  Chars characters(std::size_t from) const {
    Chars out;
    for (std::size_t i = from; i < text_.size(); ++i) {
      if (text_[i] != '\\') {
        out.push_back({text_[i], false, i + 1});
      } else if (i + 1 == text_.size()) {
        fail("a '\\' with no character after it", i + 1);
      } else {
        out.push_back({text_[i + 1], true, i + 2});
        ++i;
      }
    }
    return out;
  }

  // The text of one name: in a regular expression an escape stays one (\. is a dot), except
  // before the characters that only the expression's syntax gives a meaning to.
  static std::string name_text(const Chars& chars, bool regex) {
    std::string s;
    for (const auto& ch : chars) {
      if (regex && ch.backslash && ch.c != '@' && ch.c != ',' && ch.c != '/') s += '\\';
      s += ch.c;
    }
    return s;
  }

  NvtxName name(const Chars& chars, bool regex, const std::string& what) const {
    if (chars.empty()) fail("an empty " + what);
    try {
      return NvtxName(name_text(chars, regex), regex);
    } catch (const std::regex_error& e) {
      fail(fmt::format("'{}' is not a regular expression ({})", name_text(chars, regex), e.what()),
           chars.front().at);
    }
  }

 private:
  std::string_view text_;
  std::string_view option_;
};

// Where in `chars` a bare `c` first is, if anywhere.
std::optional<std::size_t> find(const Chars& chars, char c, std::size_t from = 0) {
  for (std::size_t i = from; i < chars.size(); ++i)
    if (is(chars[i], c)) return i;
  return std::nullopt;
}

}  // namespace

NvtxName::NvtxName(std::string text, bool regex) : text_(std::move(text)), regex_(regex) {
  if (regex_) pattern_ = std::regex(text_, std::regex::ECMAScript);
}

bool NvtxName::matches(const std::string& name) const {
  return regex_ ? std::regex_search(name, pattern_) : name == text_;
}

NvtxExpression NvtxExpression::parse(std::string_view text, std::string_view option) {
  const Parser parser(text, option);
  NvtxExpression e;
  const bool regex = text.substr(0, kRegexPrefix.size()) == kRegexPrefix;
  Chars chars = parser.characters(regex ? kRegexPrefix.size() : 0);
  if (chars.empty())
    parser.fail("an empty expression (name a range: A/ for push/pop, A for start/end)");

  // Domain@ranges: one domain per expression.
  Chars range = chars;
  if (const auto at = find(chars, '@')) {
    if (const auto second = find(chars, '@', *at + 1))
      parser.fail("a second '@' (an expression names ranges of one domain)", chars[*second].at);
    if (*at == 0) parser.fail("an empty domain name before '@'", chars[*at].at);
    e.domain_ = parser.name(Chars(chars.begin(), chars.begin() + *at), regex, "domain name");
    range.assign(chars.begin() + *at + 1, chars.end());
    if (range.empty()) parser.fail("no range name after '@'", chars[*at].at);
  }

  // In a regular expression, "/[" at the start and "/]" at the end are the expression's own
  // brackets, not the stack's bottom and top.
  if (regex && range.size() >= 2 && is(range[0], '/') && is(range[1], '[')) {
    range.erase(range.begin());
    range.front().escaped = true;
  } else if (is(range.front(), '[')) {
    e.at_bottom_ = true;
    range.erase(range.begin());
  }
  if (regex && range.size() >= 2 && is(range.back(), ']') && is(range[range.size() - 2], '/')) {
    range.erase(range.end() - 2);
    range.back().escaped = true;
  } else if (!range.empty() && is(range.back(), ']')) {
    e.at_top_ = true;
    range.pop_back();
  }
  bool trailing_slash = false;
  if (!range.empty() && is(range.back(), '/') && !e.at_top_) {
    trailing_slash = true;
    range.pop_back();
  }
  if (range.empty()) parser.fail("no range name", text.size());

  const auto slash = find(range, '/');
  const auto comma = find(range, ',');
  if (slash && comma)
    parser.fail("',' (start/end ranges) and '/' (push/pop ranges) in one expression",
                range[std::max(*slash, *comma)].at);
  e.push_pop_ = slash || trailing_slash || e.at_bottom_ || e.at_top_;
  if (comma && e.push_pop_)
    parser.fail(
        "'[', ']' and a final '/' mark push/pop ranges, not a ','-separated list of start/end "
        "ranges",
        range[*comma].at);
  if (!regex)
    for (const auto& ch : range)
      if (is(ch, '[') || is(ch, ']'))
        parser.fail(
            fmt::format("'{}' marks the {} of the stack only at the {} of the ranges "
                        "(write \\{} for the character)",
                        ch.c, ch.c == '[' ? "bottom" : "top", ch.c == '[' ? "start" : "end", ch.c),
            ch.at);

  // The names, and the wildcards between them.
  const char delimiter = e.push_pop_ ? '/' : ',';
  std::vector<Chars> parts(1);
  std::vector<std::size_t> ends;  // where each part ends: its delimiter, or past the last
  for (const auto& ch : range) {
    if (is(ch, delimiter)) {
      ends.push_back(ch.at);
      parts.emplace_back();
    } else {
      parts.back().push_back(ch);
    }
  }
  ends.push_back(range.back().at + 1);
  std::optional<Gap> pending;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Chars& part = parts[i];
    if (part.empty()) parser.fail("an empty range name", ends[i]);
    const bool star = part.size() == 1 && is(part[0], '*');
    const bool plus = part.size() == 1 && is(part[0], '+');
    if (!star && !plus) {
      if (!e.names_.empty()) e.gaps_.push_back(pending.value_or(Gap::adjacent));
      pending.reset();
      e.names_.push_back(parser.name(part, regex, "range name"));
      continue;
    }
    if (!e.push_pop_)
      parser.fail(
          "'*' and '+' stand between push/pop ranges (A/*/B), not in a list of "
          "start/end ranges",
          part[0].at);
    if (e.names_.empty() || pending || i + 1 == parts.size())
      parser.fail(
          fmt::format("a '{}' needs a range name on each side (A/{}/B)", part[0].c, part[0].c),
          part[0].at);
    pending = star ? Gap::any : Gap::one;
  }
  return e;
}

bool NvtxExpression::matches(const NvtxOpen& open) const {
  const auto& by_domain = push_pop_ ? open.stacks : open.started;
  for (const auto& entry : by_domain) {
    const std::vector<std::string>& ranges = entry.second;  // a lambda cannot capture a binding
    if (!domain_.matches(entry.first)) continue;
    if (push_pop_ ? stack_matches(ranges)
                  : std::all_of(names_.begin(), names_.end(), [&](const NvtxName& n) {
                      return std::any_of(ranges.begin(), ranges.end(),
                                         [&](const std::string& r) { return n.matches(r); });
                    }))
      return true;
  }
  return false;
}

// From the last name back to the first: whether names_[i..] match with names_[i] at position p.
// One pass per name over the stack (k x n), however many '*' the expression has.
bool NvtxExpression::stack_matches(const std::vector<std::string>& stack) const {
  const std::size_t n = stack.size();
  if (n == 0) return false;
  std::vector<char> next(n + 2, 0), here(n + 2, 0);
  for (std::size_t i = names_.size(); i-- > 0;) {
    // Whether names_[i + 1..] match from some position after p: for '*'.
    std::vector<char> later(n + 1, 0);
    for (std::size_t p = n; p-- > 0;) later[p] = later[p + 1] || next[p + 1];
    for (std::size_t p = 0; p < n; ++p) {
      bool rest = true;
      if (i + 1 == names_.size()) {
        rest = !at_top_ || p + 1 == n;
      } else {
        switch (gaps_[i]) {
          case Gap::adjacent:
            rest = next[p + 1];
            break;
          case Gap::one:
            rest = next[p + 2];
            break;
          case Gap::any:
            rest = later[p];
            break;
        }
      }
      here[p] = rest && names_[i].matches(stack[p]);
    }
    std::swap(next, here);
  }
  return at_bottom_ ? next[0]
                    : std::any_of(next.begin(), next.begin() + n, [](char c) { return c; });
}

std::string nvtx_path(const std::vector<std::string>& ranges) {
  std::string path;
  for (const auto& name : ranges) {
    if (!path.empty()) path += '/';
    for (char c : name) {
      if (c == '/' || c == '\\') path += '\\';
      path += c;
    }
  }
  return path;
}

std::vector<std::string> nvtx_path_parts(std::string_view path) {
  std::vector<std::string> parts;
  if (path.empty()) return parts;
  parts.emplace_back();
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '\\' && i + 1 < path.size()) {
      parts.back() += path[++i];
    } else if (path[i] == '/') {
      parts.emplace_back();
    } else {
      parts.back() += path[i];
    }
  }
  return parts;
}

NvtxFilter::NvtxFilter(const std::vector<std::string>& includes,
                       const std::vector<std::string>& excludes) {
  for (const auto& text : includes)
    includes_.push_back(NvtxExpression::parse(text, "--nvtx-include"));
  for (const auto& text : excludes)
    excludes_.push_back(NvtxExpression::parse(text, "--nvtx-exclude"));
}

bool NvtxFilter::selects(const NvtxOpen& open) const {
  const auto matches = [&](const NvtxExpression& e) { return e.matches(open); };
  return (includes_.empty() || std::any_of(includes_.begin(), includes_.end(), matches)) &&
         std::none_of(excludes_.begin(), excludes_.end(), matches);
}

}  // namespace gpulab::report
