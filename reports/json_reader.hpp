// Reading a JSON document with validation: a cursor that knows its path, so that every error
// says where it happened ("variants[1].timing.median: expected a number").
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "reports/base/errors.hpp"

namespace gpulab::report {

using nlohmann::json;

// A cursor into the document that knows its path, so every error says where it happened.
class Reader {
 public:
  Reader(const json& node, std::string where) : node_(node), where_(std::move(where)) {}

  Reader at(const std::string& key) const {
    expect_object();
    auto it = node_.find(key);
    if (it == node_.end()) fail(join(key), "missing");
    return Reader(*it, join(key));
  }
  bool has(const std::string& key) const {
    return node_.is_object() && node_.contains(key) && !node_.at(key).is_null();
  }

  std::string str(const std::string& key) const { return at(key).as_string(); }
  std::string str_or(const std::string& key, const std::string& fallback) const {
    return has(key) ? str(key) : fallback;
  }
  double num(const std::string& key) const { return at(key).as_number(); }
  double num_or(const std::string& key, double fallback) const {
    return has(key) ? num(key) : fallback;
  }
  // A quantity that cannot be negative: a duration, bytes, FLOP, a count, a grid or block size.
  double amount(const std::string& key) const { return at(key).as_amount(); }
  double amount_or(const std::string& key, double fallback) const {
    return has(key) ? amount(key) : fallback;
  }
  std::int64_t whole_amount_or(const std::string& key, std::int64_t fallback) const {
    if (!has(key)) return fallback;
    const std::int64_t v = integer(key);
    if (v < 0) fail(join(key), "negative: expected 0 or more");
    return v;
  }
  std::int64_t integer(const std::string& key) const { return at(key).as_integer(); }
  std::int64_t integer_or(const std::string& key, std::int64_t fallback) const {
    return has(key) ? integer(key) : fallback;
  }
  std::uint64_t count_or(const std::string& key, std::uint64_t fallback) const {
    return has(key) ? at(key).as_count() : fallback;
  }
  bool boolean_or(const std::string& key, bool fallback) const {
    if (!has(key)) return fallback;
    const auto r = at(key);
    if (!r.node_.is_boolean()) fail(r.where_, "expected true or false");
    return r.node_.get<bool>();
  }

  std::string as_string() const {
    if (!node_.is_string()) fail(where_, "expected a string");
    return node_.get<std::string>();
  }
  double as_number() const {
    if (!node_.is_number()) fail(where_, "expected a number");
    return node_.get<double>();
  }
  // Bytes, elements: a number from 0 to 2^64 - 1 (a float outside that range has no uint64 value:
  // converting it would be undefined behaviour); a fraction is cut to its whole part.
  std::uint64_t as_count() const {
    const double v = as_number();
    if (!(v >= 0 && v < 18446744073709551616.0))
      fail(where_, "expected a count from 0 to 2^64 - 1");
    return node_.is_number_integer() ? node_.get<std::uint64_t>() : static_cast<std::uint64_t>(v);
  }
  double as_amount() const {
    const double v = as_number();
    if (!(v >= 0)) fail(where_, "negative: expected 0 or more");
    if (!std::isfinite(v)) fail(where_, "not finite");
    return v;
  }
  std::int64_t as_integer() const {
    if (!node_.is_number_integer()) fail(where_, "expected an integer");
    return node_.get<std::int64_t>();
  }

  // Calls f(Reader) for each element of an array member.
  template <typename F>
  void each(const std::string& key, F f) const {
    const auto arr = at(key);
    if (!arr.node_.is_array()) fail(arr.where_, "expected an array");
    for (std::size_t i = 0; i < arr.node_.size(); ++i)
      f(Reader(arr.node_[i], arr.where_ + "[" + std::to_string(i) + "]"));
  }

  // A {name: number} object; null values (not measured) are skipped.
  std::map<std::string, double> number_map_or_empty(const std::string& key) const {
    std::map<std::string, double> out;
    if (!has(key)) return out;
    const auto obj = at(key);
    obj.expect_object();
    for (auto it = obj.node_.begin(); it != obj.node_.end(); ++it) {
      if (it->is_null()) continue;
      if (!it->is_number()) fail(obj.join(it.key()), "expected a number");
      out[it.key()] = it->get<double>();
    }
    return out;
  }

  const json& node() const { return node_; }
  const std::string& where() const { return where_; }

  [[noreturn]] static void fail(const std::string& where, const std::string& what) {
    throw UsageError(where + ": " + what);
  }

 private:
  void expect_object() const {
    if (!node_.is_object()) fail(where_, "expected an object");
  }
  std::string join(const std::string& key) const {
    return where_.empty() ? key : where_ + "." + key;
  }

  const json& node_;
  std::string where_;
};

template <typename Enum>
Enum parse_enum(const Reader& r, const std::string& key,
                std::optional<Enum> (*parse)(const std::string&), const char* allowed) {
  const auto text = r.str(key);
  const auto value = parse(text);
  if (!value) {
    Reader::fail(r.where().empty() ? key : r.where() + "." + key,
                 "'" + text + "' is not one of " + allowed);
  }
  return *value;
}

}  // namespace gpulab::report
