// The record-line scanner (reports/record_line.hpp) against the JSON document parser it stands
// in for: the same lines accepted, the same values read, and only records' two levels of nesting.
#include "reports/record_line.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/profile_records.hpp"

namespace gpulab::report {
namespace {

using nlohmann::json;

bool scans(const std::string& text) {
  RecordLine line;
  try {
    line.parse(text);
    return true;
  } catch (const NotARecord&) {
    return false;
  }
}

// How deep a document nests: 1 for an object of scalars.
int depth(const json& j) {
  if (!j.is_structured()) return 0;
  int deepest = 0;
  for (const auto& e : j) deepest = std::max(deepest, depth(e));
  return deepest + 1;
}

// Every member the document parser read, read again through the scanner's accessors.
void expect_same_values(const RecordLine::Object& o, const json& doc, const std::string& text) {
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& key = it.key();
    const json& v = *it;
    SCOPED_TRACE(text + " ." + key);
    ASSERT_TRUE(o.has(key));
    if (v.is_string()) {
      EXPECT_EQ(o.str(key), v.get<std::string>());
    } else if (v.is_boolean()) {
      EXPECT_EQ(o.boolean_or(key, !v.get<bool>()), v.get<bool>());
    } else if (v.is_number_integer() && !v.is_number_unsigned()) {
      EXPECT_EQ(o.integer(key), v.get<std::int64_t>());
    } else if (v.is_number_unsigned()) {
      if (v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX))
        EXPECT_EQ(o.integer(key), v.get<std::int64_t>());
      else
        EXPECT_THROW(o.integer(key), NotARecord) << "past int64's range";
      EXPECT_EQ(o.number(key), v.get<double>());
    } else if (v.is_number_float()) {
      EXPECT_EQ(o.number(key), v.get<double>());
      EXPECT_THROW(o.integer(key), NotARecord) << "a float is not an integer";
    } else if (v.is_null()) {
      EXPECT_THROW(o.str(key), NotARecord);
    } else if (v.is_object()) {
      expect_same_values(o.object(key), v, text);
      std::map<std::string, double> numbers;
      bool all_numbers = true;
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (m->is_number())
          numbers[m.key()] = m->get<double>();
        else if (!m->is_null())
          all_numbers = false;
      }
      if (all_numbers) EXPECT_EQ(o.number_map_or_empty(key), numbers);
    } else if (v.is_array()) {
      std::vector<std::int64_t> integers;
      bool all_integers = true;
      for (const auto& e : v) {
        if (e.is_number_integer() &&
            (!e.is_number_unsigned() ||
             e.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX)))
          integers.push_back(e.get<std::int64_t>());
        else
          all_integers = false;
      }
      if (all_integers)
        EXPECT_EQ(o.integers(key), integers);
      else
        EXPECT_THROW(o.integers(key), NotARecord);
    }
  }
}

// The scanner accepts a line exactly when the document parser reads it as an object at most two
// levels deep, and then reads the same values.
void expect_agreement(const std::string& text) {
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  const bool record_shaped = !doc.is_discarded() && doc.is_object() && depth(doc) <= 2;
  RecordLine line;
  bool scanned = true;
  try {
    line.parse(text);
  } catch (const NotARecord&) {
    scanned = false;
  }
  ASSERT_EQ(scanned, record_shaped) << "line: " << text;
  if (scanned) expect_same_values(line.top(), doc, text);
}

// One line of each record type, with strings that need escaping and characters past ASCII.
std::vector<std::string> record_lines() {
  RecordedLaunch launch;
  launch.pid = 4242;
  launch.index = 7;
  launch.correlation_id = 99;
  launch.mangled_name = "_Z6kernelIfEvPT_\"quoted\"\\slash\t\u00e9\u4e2d\U0001F600";
  launch.grid[0] = 4096;
  launch.block[0] = 256;
  StaticAttributes attributes;
  attributes.registers_per_thread = 32;
  attributes.static_shared_bytes = 1024;
  attributes.max_active_blocks_per_sm = 8;
  attributes.theoretical_occupancy = 0.75;
  launch.attributes = attributes;
  launch.matched = launch.profiled = true;
  launch.passes = 3;
  launch.metrics = {{"dram__bytes_read.sum", 1.5e6}, {"sm__throughput.avg.pct", 87.25}};
  std::vector<std::string> lines = {
      to_line(RecordedProcess{4242, 1, "counters", 130000, "GH100", ""}),
      to_line(launch),
      to_line(RecordedCounters{4242, 7, 2, {{"a", -1e-300}, {"b", 1e300}}, "why\nnot"}),
      to_line(RecordedKernelTime{4242, 99, 1700000000000000000, 1700000000000001000, 7, 32, 0, 8}),
      to_line(RecordedWatchdog{4242, 7, "_Z1kv", 2.5}),
      to_line(RecordedTally{4242, "_Z1kv", true, 65536, 65000, 0.5}),
      end_line(4242),
  };
  for (auto& l : lines) l.pop_back();  // the newline
  return lines;
}

TEST(RecordLine, ReadsEveryRecordAsTheDocumentParserDoes) {
  for (const auto& text : record_lines()) expect_agreement(text);
  RecordLine line;
  line.parse(record_lines()[1]);
  EXPECT_EQ(line.top().str("name"), "_Z6kernelIfEvPT_\"quoted\"\\slash\t\u00e9\u4e2d\U0001F600");
  EXPECT_EQ(line.top().integers("grid"), (std::vector<std::int64_t>{4096, 0, 0}));
  EXPECT_EQ(line.top().object("attributes").integer("registers_per_thread"), 32);
  EXPECT_EQ(line.top().number_map_or_empty("metrics").at("sm__throughput.avg.pct"), 87.25);
}

TEST(RecordLine, RefusesWhatIsNotJsonOrNestsDeeperThanARecord) {
  const std::string refused[] = {
      "",
      "[]",
      "{\"a\":1} x",
      "{\"a\":1,}",
      "{\"a\" 1}",
      "{\"a\":01}",
      "{\"a\":1.}",
      "{\"a\":.5}",
      "{\"a\":+1}",
      "{\"a\":-}",
      "{\"a\":1e}",
      "{\"a\":tru}",
      "{\"a\":\"\t\"}",                // a raw control character
      "{\"a\":\"\\x\"}",               // an unknown escape
      "{\"a\":\"\\ud800\"}",           // a high surrogate alone
      "{\"a\":\"\\udc00\"}",           // a low surrogate alone
      "{\"a\":\"\xC0\x80\"}",          // an overlong form
      "{\"a\":\"\xED\xA0\x80\"}",      // a surrogate in UTF-8
      "{\"a\":\"\xF5\x80\x80\x80\"}",  // past U+10FFFF
      "{\"a\":\"\xE2\x82\"}",          // cut short
      "{\"a\":{\"b\":[1]}}",           // three levels
      "{\"a\":[[1]]}",                 // three levels
      "{\"a\":\"cut short by a kill",
  };
  for (const auto& text : refused) {
    EXPECT_FALSE(scans(text)) << text;
    expect_agreement(text);
  }
  EXPECT_TRUE(scans(" {\"a\" : [ 1 , 2 ] ,\"b\":{}} \r"));
  EXPECT_TRUE(scans("{\"a\":\"\\ud83d\\ude00\\u0041\\/\"}"));
}

TEST(RecordLine, AKeyWrittenTwiceMeansItsLastValue) {
  RecordLine line;
  line.parse(R"({"a":1,"m":{"x":1,"y":2,"x":null},"a":2})");
  EXPECT_EQ(line.top().integer("a"), 2);
  EXPECT_EQ(line.top().number_map_or_empty("m"), (std::map<std::string, double>{{"y", 2}}));
}

TEST(RecordLine, AMemberOfTheWrongTypeOrMissingIsNotARecord) {
  RecordLine line;
  line.parse(R"({"s":"x","i":1.5,"big":9223372036854775808,"n":null,"arr":[1,"x"]})");
  const auto top = line.top();
  EXPECT_THROW(top.integer("s"), NotARecord);
  EXPECT_THROW(top.integer("i"), NotARecord);
  EXPECT_THROW(top.integer("big"), NotARecord);
  EXPECT_THROW(top.str("n"), NotARecord);
  EXPECT_THROW(top.str("absent"), NotARecord);
  EXPECT_THROW(top.integers("arr"), NotARecord);
  EXPECT_THROW(top.object("s"), NotARecord);
  EXPECT_EQ(top.integer_or("absent", -1), -1);
  EXPECT_EQ(top.number("big"), 9223372036854775808.0);
}

// Seeded mutations of real record lines: bytes deleted, replaced, inserted (JSON's own
// characters, digits, escapes and bytes past ASCII) and spans repeated. Each mutant is read by
// both parsers and must be read alike.
TEST(RecordLine, AgreesWithTheDocumentParserOnMutatedRecords) {
  const auto seeds = record_lines();
  std::mt19937 random(20261207);
  const std::string alphabet = "{}[]:,\"\\/-+.eE0123456789 tfnlrsu\x01\x7f\xc3\xa9\xed\xf0\x80\xbf";
  const auto pick = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(random);
  };
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text = seeds[pick(seeds.size())];
    for (std::size_t edits = 1 + pick(3); edits > 0 && !text.empty(); --edits) {
      const std::size_t at = pick(text.size());
      switch (pick(4)) {
        case 0:
          text.erase(at, 1);
          break;
        case 1:
          text[at] = alphabet[pick(alphabet.size())];
          break;
        case 2:
          text.insert(at, 1, alphabet[pick(alphabet.size())]);
          break;
        default:
          text.insert(at, text.substr(at, 1 + pick(8)));
      }
    }
    expect_agreement(text);
    if (HasFatalFailure()) return;
    accepted += scans(text);
  }
  // Both outcomes were exercised: most mutants break the JSON, some keep it.
  EXPECT_GT(accepted, 1000);
  EXPECT_LT(accepted, 19000);
}

}  // namespace
}  // namespace gpulab::report
