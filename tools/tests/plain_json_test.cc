// The step protocol's plain-line reader (tools/electsim/external/plain_json.h)
// must read every line it accepts exactly as nlohmann/json reads it, and
// leave to nlohmann/json every line it might read differently.
#include "tools/electsim/external/plain_json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace electsim::external {
namespace {

using json = nlohmann::json;

// What the plain reader made of an object, as nlohmann/json would hold it.
json AsJson(const PlainJsonLine& line, const PlainJsonObject& object) {
  json out = json::object();
  for (int i = 0; i < object.size(); ++i) {
    const PlainJsonObject::Member& member = object.member(i);
    const std::string key(member.key);
    switch (member.kind) {
      case PlainJsonObject::Kind::kInteger: out[key] = member.integer; break;
      case PlainJsonObject::Kind::kString: out[key] = std::string(member.text); break;
      case PlainJsonObject::Kind::kObject: out[key] = AsJson(line, *line.Nested(key)); break;
    }
  }
  return out;
}

// Integers compare by value whether nlohmann holds them signed or unsigned.
bool SameDocument(const json& a, const json& b) {
  if (a.is_number_integer() && b.is_number_integer()) return a.get<int64_t>() == b.get<int64_t>();
  if (a.is_object() && b.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (!b.contains(it.key()) || !SameDocument(*it, b.at(it.key()))) return false;
    }
    return true;
  }
  return a == b;
}

// Parse accepted `text`: nlohmann/json must read the same document from it.
void ExpectAgreesWithNlohmann(const std::string& text) {
  PlainJsonLine line;
  if (!line.Parse(text)) return;
  const json full = json::parse(text, nullptr, false);
  ASSERT_FALSE(full.is_discarded()) << text;
  EXPECT_TRUE(SameDocument(AsJson(line, line.top()), full)) << text;
}

TEST(PlainJson, ReadsTheEffectsNodesWrite) {
  PlainJsonLine line;
  ASSERT_TRUE(line.Parse(R"({"type":"send","to":3,"msg":{"type":"etcd.app","term":7,"index":-2}})"));
  EXPECT_EQ(line.top().String("type"), "send");
  EXPECT_EQ(line.top().Integer("to"), 3);
  const PlainJsonObject* msg = line.Nested("msg");
  ASSERT_NE(msg, nullptr);
  EXPECT_EQ(msg->String("type"), "etcd.app");
  EXPECT_EQ(msg->Integer("term"), 7);
  EXPECT_EQ(msg->Integer("index"), -2);
  EXPECT_EQ(msg->Integer("commit"), std::nullopt);
  EXPECT_EQ(line.top().Integer("type"), std::nullopt);  // a string, not an integer
  EXPECT_EQ(line.Nested("to"), nullptr);                // an integer, not an object

  ASSERT_TRUE(line.Parse(R"({"type":"done"})"));
  EXPECT_EQ(line.top().size(), 1);
  EXPECT_EQ(line.Nested("msg"), nullptr);  // nothing left of the line before
  // Python's json.dumps without separators: whitespace between tokens.
  ASSERT_TRUE(line.Parse(R"( { "type" : "write", "key" : "raft/term", "value" : 4 } )"));
  EXPECT_EQ(line.top().String("key"), "raft/term");
  EXPECT_EQ(line.top().Integer("value"), 4);
}

TEST(PlainJson, ReadsInt64sWholeRange) {
  PlainJsonLine line;
  ASSERT_TRUE(line.Parse(R"({"a":-9223372036854775808,"b":9223372036854775807,"c":0,"d":-0})"));
  EXPECT_EQ(line.top().Integer("a"), INT64_MIN);
  EXPECT_EQ(line.top().Integer("b"), INT64_MAX);
  EXPECT_EQ(line.top().Integer("c"), 0);
  EXPECT_EQ(line.top().Integer("d"), 0);
}

TEST(PlainJson, LeavesToTheFullParserWhatItMightReadDifferently) {
  const std::vector<std::string> not_plain = {
      R"({"a":9223372036854775808})",   // past int64 (nlohmann: unsigned)
      R"({"a":-9223372036854775809})",  // below int64 (nlohmann: a float)
      R"({"a":1.0})",                   // a float
      R"({"a":1e3})",                   // a float
      R"({"a":01})",                    // not JSON
      R"({"a":-})",                     // not JSON
      R"({"a":"x\"y"})",                // an escape
      "{\"a\":\"caf\xc3\xa9\"}",        // UTF-8, which nlohmann checks
      "{\"a\":\"tab\there\"}",          // a control character
      R"({"a":1,"a":2})",               // a key twice (nlohmann keeps the last)
      R"({"a":[1]})",                   // an array
      R"({"a":true})",                  // true
      R"({"a":null})",                  // null
      R"({"a":{"b":{"c":1}}})",         // deeper than one level down
      R"({"a":1}x)",                    // something after the object
      "{\"a\":1}\x01",                  // a control character after it
      R"({"a":1,})",                    // a trailing comma
      R"({"a" 1})",                     // no colon
      R"([1])",                         // not an object
      R"()",                            // nothing
      R"({"a":1)",                      // unclosed
      R"({"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,)"
      R"("k14":14,"k15":15,"k16":16,"k17":17})",  // more members than it holds
  };
  for (const std::string& text : not_plain) {
    PlainJsonLine line;
    EXPECT_FALSE(line.Parse(text)) << text;
  }
}

// Lines made by mutating well-formed effects one byte at a time: whatever the
// plain reader accepts, nlohmann/json reads as the same document.
TEST(PlainJson, EveryLineItAcceptsNlohmannReadsTheSame) {
  const std::vector<std::string> seeds = {
      R"({"type":"send","to":3,"msg":{"type":"etcd.app","term":7,"index":12,"commit":-4}})",
      R"({"type":"observe","obs":{"type":"role","role":2,"term":9}})",
      R"({"type":"set_timer","id":1,"delay":100000000})",
      R"( { "type" : "persist" , "key" : "hard/vote" , "value" : -9223372036854775808 } )",
      R"({})",
  };
  const std::string alphabet = R"({}[]":,-.0123456789eE tnx\)";
  uint64_t state = 0x9e3779b97f4a7c15;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int accepted = 0;
  for (const std::string& seed : seeds) {
    ExpectAgreesWithNlohmann(seed);
    for (int round = 0; round < 4000; ++round) {
      std::string text = seed;
      const int edits = 1 + static_cast<int>(next() % 3);
      for (int e = 0; e < edits && !text.empty(); ++e) {
        const size_t at = next() % text.size();
        const char c = alphabet[next() % alphabet.size()];
        switch (next() % 3) {
          case 0: text[at] = c; break;
          case 1: text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c); break;
          default: text.erase(at, 1); break;
        }
      }
      PlainJsonLine line;
      if (line.Parse(text)) ++accepted;
      ExpectAgreesWithNlohmann(text);
    }
  }
  EXPECT_GT(accepted, 100);  // the mutations reach accepted lines, not only rejected ones
}

}  // namespace
}  // namespace electsim::external
