// One line of a record file (reports/profile_records.hpp), read without building a JSON document.
// A record is one JSON object whose members are strings, numbers, booleans and nulls, or arrays
// and objects of those (a launch's grid, its metrics): never deeper. A program with many
// launches writes hundreds of thousands of such lines, and building a document for each took
// most of the time of reading them; this scanner keeps each member's text in storage that the
// next line reuses. It accepts exactly the JSON that a document parser accepts, up to that depth,
// with strings of valid UTF-8; anything else is not a record line.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab::report {

// A line that is not a record: malformed JSON, nesting past two levels, text that is not
// UTF-8, or a member missing or of the wrong type. Readers count such lines, never stop at one.
struct NotARecord : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class RecordLine {
 public:
  // Reads one line (without its newline); throws NotARecord.
  void parse(std::string_view text);

  // The members of the line's object, or of one object inside it. A key written twice means
  // its last value, as in a JSON document.
  class Object {
   public:
    bool has(std::string_view key) const { return find(key) >= 0; }
    const std::string& str(std::string_view key) const;
    std::string str_or(std::string_view key, const std::string& fallback) const;
    std::int64_t integer(std::string_view key) const;  // an integer literal, in int64's range
    std::int64_t integer_or(std::string_view key, std::int64_t fallback) const;
    double number(std::string_view key) const;  // any number
    double number_or(std::string_view key, double fallback) const;
    bool boolean_or(std::string_view key, bool fallback) const;
    Object object(std::string_view key) const;
    // The integers of an array member, in order.
    std::vector<std::int64_t> integers(std::string_view key) const;
    // The strings of an array member, in order; empty when absent.
    std::vector<std::string> strings_or_empty(std::string_view key) const;
    // A {name: number} member; null values (not measured) are skipped. Empty when absent.
    std::map<std::string, double> number_map_or_empty(std::string_view key) const;

   private:
    friend class RecordLine;
    Object(const RecordLine& line, int scope) : line_(&line), scope_(scope) {}
    int find(std::string_view key) const;  // the index of the member's value; -1 when absent
    int at(std::string_view key) const;    // as find, throwing when absent
    const RecordLine* line_;
    int scope_;  // the index of the container whose members these are; -1: the line's object
  };
  Object top() const { return Object(*this, -1); }

 private:
  enum class Kind { string, integer, number, boolean, null, array, object };
  struct Value {
    Kind kind = Kind::null;
    int parent = -1;   // the container that holds it; -1: the line's object
    std::string key;   // its member name; empty in an array
    std::string text;  // a string's content (unescaped), a number's or a boolean's literal
  };
  class Scanner;
  static double number_of(const Value& v, std::string_view key);

  Value& add(Kind kind, int parent);
  std::vector<Value> values_;  // in the line's order; only the first used_ belong to this line
  std::size_t used_ = 0;
};

}  // namespace gpulab::report
