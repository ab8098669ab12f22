#include "reports/record_line.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace gpulab::report {

// A recursive-descent scanner of RFC 8259 JSON, two levels deep: the line's object, and the
// arrays and objects of its members.
class RecordLine::Scanner {
 public:
  Scanner(RecordLine& line, std::string_view text) : line_(line), s_(text) {}

  void read_line() {
    skip_space();
    expect('{');
    members(-1, 1);
    skip_space();
    if (pos_ != s_.size()) fail("text after the record");
  }

 private:
  [[noreturn]] static void fail(const char* what) { throw NotARecord(what); }

  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }
  char next() {
    if (at_end()) fail("the line ends inside the record");
    return s_[pos_++];
  }
  void expect(char c) {
    if (next() != c) fail("not JSON");
  }
  void skip_space() {
    while (!at_end() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  // After '{': `"key": value` pairs up to '}'. `depth` is the object's own (1: the line's).
  void members(int container, int depth) {
    skip_space();
    if (peek() == '}') {
      ++pos_;
      return;
    }
    for (;;) {
      skip_space();
      expect('"');
      read_string(key_);
      skip_space();
      expect(':');
      skip_space();
      value(container, depth, key_);
      skip_space();
      const char c = next();
      if (c == '}') return;
      if (c != ',') fail("expected , or } after a member");
    }
  }

  // After '[': values up to ']'.
  void elements(int container, int depth) {
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return;
    }
    for (;;) {
      skip_space();
      value(container, depth, {});
      skip_space();
      const char c = next();
      if (c == ']') return;
      if (c != ',') fail("expected , or ] after an element");
    }
  }

  // A value inside a container of depth `depth`.
  void value(int container, int depth, std::string_view key) {
    const char c = peek();
    if (c == '"') {
      ++pos_;
      Value& v = line_.add(Kind::string, container);
      v.key.assign(key);
      read_string(v.text);
    } else if (c == '{' || c == '[') {
      if (depth >= 2) fail("nested deeper than a record");
      ++pos_;
      line_.add(c == '{' ? Kind::object : Kind::array, container).key.assign(key);
      const int index = static_cast<int>(line_.used_) - 1;
      if (c == '{')
        members(index, depth + 1);
      else
        elements(index, depth + 1);
    } else if (c == 't' || c == 'f' || c == 'n') {
      const std::string_view word = c == 't' ? "true" : c == 'f' ? "false" : "null";
      if (s_.substr(pos_, word.size()) != word) fail("not JSON");
      pos_ += word.size();
      Value& v = line_.add(c == 'n' ? Kind::null : Kind::boolean, container);
      v.key.assign(key);
      v.text.assign(word);
    } else {
      number(container, key);
    }
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  void number(int container, std::string_view key) {
    const std::size_t begin = pos_;
    const auto digits = [this] {
      const std::size_t from = pos_;
      while (!at_end() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ - from;
    };
    if (peek() == '-') ++pos_;
    if (peek() == '0')
      ++pos_;
    else if (digits() == 0)
      fail("not JSON");
    bool integral = true;
    if (peek() == '.') {
      ++pos_;
      if (digits() == 0) fail("a number without digits after its point");
      integral = false;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (digits() == 0) fail("a number without digits in its exponent");
      integral = false;
    }
    Value& v = line_.add(integral ? Kind::integer : Kind::number, container);
    v.key.assign(key);
    v.text.assign(s_.substr(begin, pos_ - begin));
    // A number past double's range (1e400, or an integer of 310 digits) is no JSON value: a
    // document parser refuses it too. An integer of up to 19 digits cannot be.
    if ((!integral || v.text.size() > 19) && !std::isfinite(std::strtod(v.text.c_str(), nullptr)))
      fail("a number past double's range");
  }

  // After the opening quote: the string's content, unescaped, up to its closing quote.
  void read_string(std::string& out) {
    out.clear();
    for (;;) {
      const std::size_t run = pos_;
      while (!at_end()) {
        const auto b = static_cast<unsigned char>(s_[pos_]);
        if (b == '"' || b == '\\' || b < 0x20 || b >= 0x80) break;
        ++pos_;
      }
      out.append(s_.substr(run, pos_ - run));
      const auto b = static_cast<unsigned char>(next());
      if (b == '"') return;
      if (b == '\\')
        escape(out);
      else if (b < 0x20)
        fail("a control character in a string");
      else
        utf8_sequence(b, out);
    }
  }

  void escape(std::string& out) {
    switch (next()) {
      case '"':
        out += '"';
        return;
      case '\\':
        out += '\\';
        return;
      case '/':
        out += '/';
        return;
      case 'b':
        out += '\b';
        return;
      case 'f':
        out += '\f';
        return;
      case 'n':
        out += '\n';
        return;
      case 'r':
        out += '\r';
        return;
      case 't':
        out += '\t';
        return;
      case 'u':
        break;
      default:
        fail("an unknown escape in a string");
    }
    std::uint32_t code = hex4();
    if (code >= 0xDC00 && code <= 0xDFFF) fail("a low surrogate alone");
    if (code >= 0xD800 && code <= 0xDBFF) {  // a high surrogate: its low half must follow
      if (next() != '\\' || next() != 'u') fail("a high surrogate alone");
      const std::uint32_t low = hex4();
      if (low < 0xDC00 || low > 0xDFFF) fail("a high surrogate alone");
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(code, out);
  }

  std::uint32_t hex4() {
    std::uint32_t code = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = next();
      const int digit = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
      if (digit < 0) fail("a \\u escape without four hex digits");
      code = code * 16 + static_cast<std::uint32_t>(digit);
    }
    return code;
  }

  static void append_utf8(std::uint32_t code, std::string& out) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  // The rest of a multi-byte UTF-8 character whose first byte was `lead` (RFC 3629: no overlong
  // forms, no surrogates, nothing past U+10FFFF).
  void utf8_sequence(unsigned char lead, std::string& out) {
    int more = 0;
    unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
    if (lead >= 0xC2 && lead <= 0xDF) {
      more = 1;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      more = 2;
      if (lead == 0xE0) low = 0xA0;
      if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      more = 3;
      if (lead == 0xF0) low = 0x90;
      if (lead == 0xF4) high = 0x8F;
    } else {
      fail("a string that is not UTF-8");
    }
    out += static_cast<char>(lead);
    for (int i = 0; i < more; ++i) {
      const auto b = static_cast<unsigned char>(next());
      if (b < (i == 0 ? low : 0x80) || b > (i == 0 ? high : 0xBF))
        fail("a string that is not UTF-8");
      out += static_cast<char>(b);
    }
  }

  RecordLine& line_;
  std::string_view s_;
  std::size_t pos_ = 0;
  std::string key_;  // the member name being read
};

void RecordLine::parse(std::string_view text) {
  used_ = 0;
  Scanner(*this, text).read_line();
}

RecordLine::Value& RecordLine::add(Kind kind, int parent) {
  if (used_ == values_.size()) values_.emplace_back();
  Value& v = values_[used_++];
  v.kind = kind;
  v.parent = parent;
  return v;
}

int RecordLine::Object::find(std::string_view key) const {
  int found = -1;
  for (std::size_t i = 0; i < line_->used_; ++i) {
    const Value& v = line_->values_[i];
    if (v.parent == scope_ && v.key == key) found = static_cast<int>(i);
  }
  return found;
}

int RecordLine::Object::at(std::string_view key) const {
  const int i = find(key);
  if (i < 0) throw NotARecord("a record without its " + std::string(key));
  return i;
}

const std::string& RecordLine::Object::str(std::string_view key) const {
  const Value& v = line_->values_[at(key)];
  if (v.kind != Kind::string) throw NotARecord(std::string(key) + ": expected a string");
  return v.text;
}

std::string RecordLine::Object::str_or(std::string_view key, const std::string& fallback) const {
  return has(key) ? str(key) : fallback;
}

namespace {

std::int64_t integer_of(const std::string& literal, std::string_view key) {
  std::int64_t out = 0;
  const auto [end, error] = std::from_chars(literal.data(), literal.data() + literal.size(), out);
  if (error != std::errc() || end != literal.data() + literal.size())
    throw NotARecord(std::string(key) + ": an integer out of range");
  return out;
}

}  // namespace

std::int64_t RecordLine::Object::integer(std::string_view key) const {
  const Value& v = line_->values_[at(key)];
  if (v.kind != Kind::integer) throw NotARecord(std::string(key) + ": expected an integer");
  return integer_of(v.text, key);
}

std::int64_t RecordLine::Object::integer_or(std::string_view key, std::int64_t fallback) const {
  return has(key) ? integer(key) : fallback;
}

double RecordLine::number_of(const Value& v, std::string_view key) {
  if (v.kind != Kind::integer && v.kind != Kind::number)
    throw NotARecord(std::string(key) + ": expected a number");
  // The scanner let only JSON's number grammar through, which strtod reads whole.
  return std::strtod(v.text.c_str(), nullptr);
}

double RecordLine::Object::number(std::string_view key) const {
  return number_of(line_->values_[at(key)], key);
}

double RecordLine::Object::number_or(std::string_view key, double fallback) const {
  return has(key) ? number(key) : fallback;
}

bool RecordLine::Object::boolean_or(std::string_view key, bool fallback) const {
  const int i = find(key);
  if (i < 0) return fallback;
  const Value& v = line_->values_[i];
  if (v.kind != Kind::boolean) throw NotARecord(std::string(key) + ": expected true or false");
  return v.text == "true";
}

RecordLine::Object RecordLine::Object::object(std::string_view key) const {
  const int i = at(key);
  if (line_->values_[i].kind != Kind::object)
    throw NotARecord(std::string(key) + ": expected an object");
  return Object(*line_, i);
}

std::vector<std::int64_t> RecordLine::Object::integers(std::string_view key) const {
  const int i = at(key);
  if (line_->values_[i].kind != Kind::array)
    throw NotARecord(std::string(key) + ": expected an array");
  std::vector<std::int64_t> out;
  for (std::size_t e = i + 1; e < line_->used_; ++e) {
    const Value& v = line_->values_[e];
    if (v.parent != i) continue;
    if (v.kind != Kind::integer) throw NotARecord(std::string(key) + ": expected integers");
    out.push_back(integer_of(v.text, key));
  }
  return out;
}

std::vector<std::string> RecordLine::Object::strings_or_empty(std::string_view key) const {
  std::vector<std::string> out;
  const int i = find(key);
  if (i < 0) return out;
  if (line_->values_[i].kind != Kind::array)
    throw NotARecord(std::string(key) + ": expected an array");
  for (std::size_t e = i + 1; e < line_->used_; ++e) {
    const Value& v = line_->values_[e];
    if (v.parent != i) continue;
    if (v.kind != Kind::string) throw NotARecord(std::string(key) + ": expected strings");
    out.push_back(v.text);
  }
  return out;
}

std::map<std::string, double> RecordLine::Object::number_map_or_empty(std::string_view key) const {
  std::map<std::string, double> out;
  if (!has(key)) return out;
  const Object members = object(key);
  for (std::size_t e = members.scope_ + 1; e < line_->used_; ++e) {
    const Value& v = line_->values_[e];
    if (v.parent != members.scope_) continue;
    if (v.kind == Kind::null) {
      out.erase(v.key);  // a later null replaces an earlier value of the same name
      continue;
    }
    out[v.key] = number_of(v, v.key);
  }
  return out;
}

}  // namespace gpulab::report
