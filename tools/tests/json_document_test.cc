// The strict JSON reader under every file electsim loads: one document per
// file, nothing hidden after it, keys once, bounded depth.
#include "tools/electsim/language/json_document.h"

#include <string>

#include "gtest/gtest.h"

namespace electsim {
namespace {

using namespace std::string_literals;

std::string JsonErrorOf(const std::string& text) {
  auto document = ParseJsonText(text, "in.json");
  EXPECT_FALSE(document.ok()) << "accepted: " << text;
  if (document.ok()) return "";
  EXPECT_EQ(document.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(document.status().message());
}

TEST(JsonDocument_Parse, BuildsTheSameDocumentAsNlohmann) {
  const std::string text =
      R"({"a": [1, -2, 3.5, true, null, "x", {"b": []}], "c": {"d": {}}, "e": 18446744073709551615})";
  auto document = ParseJsonText(text, "in.json");
  ASSERT_TRUE(document.ok()) << document.status();
  EXPECT_EQ(*document, nlohmann::json::parse(text));
  EXPECT_TRUE((*document)["e"].is_number_unsigned());
  EXPECT_TRUE((*document)["a"][1].is_number_integer());
}

TEST(JsonDocument_Parse, WhitespaceAfterTheDocumentIsFine) {
  EXPECT_TRUE(ParseJsonText("{}\n\t \r\n", "in.json").ok());
  EXPECT_TRUE(ParseJsonText("\xef\xbb\xbf{}", "in.json").ok());  // a UTF-8 byte order mark
}

TEST(JsonDocument_Errors, NulByteAnywhereIsRefusedWithItsPlace) {
  // After the document: nlohmann alone would stop there and ignore the rest.
  EXPECT_EQ(JsonErrorOf("{\"a\": 1}\n\0{\"b\": 2}"s),
            "in.json:2:1: invalid JSON: a NUL byte, expected text without any");
  EXPECT_EQ(JsonErrorOf("{\"a\": 1}\0"s), "in.json:1:9: invalid JSON: a NUL byte, expected text without any");
  EXPECT_NE(JsonErrorOf("\0{}"s).find("in.json:1:1: invalid JSON: a NUL byte"), std::string::npos);
  EXPECT_NE(JsonErrorOf("{\"a\": \"x\0y\"}"s).find("in.json:1:9: invalid JSON: a NUL byte"), std::string::npos);
  EXPECT_NE(JsonErrorOf("{\"a\":\0 1}"s).find("in.json:1:6: invalid JSON: a NUL byte"), std::string::npos);
}

TEST(JsonDocument_Errors, ASecondDocumentIsRefused) {
  const std::string error = JsonErrorOf("{\"a\": 1}\n{\"b\": 2}\n");
  EXPECT_NE(error.find("in.json:2:1: invalid JSON: more text after the top-level value"), std::string::npos) << error;
  EXPECT_NE(JsonErrorOf("[1] [2]").find("in.json:1:5: invalid JSON: more text after the top-level value"),
            std::string::npos);
  EXPECT_NE(JsonErrorOf("1 2").find("more text after the top-level value"), std::string::npos);
}

TEST(JsonDocument_Errors, TextThatEndsTooEarlyIsSaidToEndTooEarly) {
  for (const char* cut : {"", "{", "{\"nodes\": 5", "   ", "\n", "[1, 2"}) {
    const std::string error = JsonErrorOf(cut);
    EXPECT_NE(error.find("invalid JSON: the text ends before the JSON document does"), std::string::npos)
        << "\"" << cut << "\": " << error;
    EXPECT_EQ(error.find("more text after"), std::string::npos) << error;
  }
}

TEST(JsonDocument_Errors, GarbageAfterTheDocumentIsRefused) {
  std::string error = JsonErrorOf("{\"a\": 1} trailing words");
  EXPECT_NE(error.find("in.json:1:"), std::string::npos) << error;
  EXPECT_NE(error.find("invalid JSON"), std::string::npos) << error;
  error = JsonErrorOf("{\"a\": 1}}");
  EXPECT_NE(error.find("in.json:1:9: invalid JSON: more text after the top-level value"), std::string::npos) << error;
}

TEST(JsonDocument_Errors, SyntaxErrorNamesLineAndColumnInCharacters) {
  // "é" is two bytes but one column.
  const std::string error = JsonErrorOf("{\n  \"\xc3\xa9\": 1,\n  \"b\" 2\n}");
  EXPECT_NE(error.find("in.json:3:7: invalid JSON: syntax error"), std::string::npos) << error;
}

TEST(JsonDocument_Errors, DuplicateKeyNamesItsPath) {
  EXPECT_EQ(JsonErrorOf(R"({"a": 1, "a": 2})"),
            "in.json: at /a: expected each key once in an object, this key appears again");
  EXPECT_NE(JsonErrorOf(R"({"x": [0, {"k": {}}, {"a/b": 1, "a/b": 1}]})").find("at /x/2/a~1b: expected each key once"),
            std::string::npos);
  // The same key in two different objects is fine.
  EXPECT_TRUE(ParseJsonText(R"([{"a": 1}, {"a": 2}, {"b": {"a": 3}}])", "in.json").ok());
}

TEST(JsonDocument_Errors, NestingIsBounded) {
  auto nested = [](size_t levels) { return std::string(levels, '[') + std::string(levels, ']'); };
  EXPECT_TRUE(ParseJsonText(nested(kMaxJsonDepth), "in.json").ok());
  const std::string error = JsonErrorOf(R"({"k": )" + nested(kMaxJsonDepth) + "}");
  EXPECT_NE(error.find("in.json: at /k/0/0/0"), std::string::npos) << error;
  EXPECT_NE(error.find("expected at most 32 levels of nested arrays and objects"), std::string::npos) << error;
}

TEST(JsonDocument_Errors, NumberBeyondADoubleNamesItsPath) {
  EXPECT_EQ(JsonErrorOf(R"({"a": [1, 2, -1e400]})"),
            "in.json: at /a/2: expected a number within the range of a 64-bit float, got one beyond it");
}

TEST(JsonDocument_Errors, MessagesCarryNoRawControlCharacters) {
  // A duplicated key holding ESC [2J, and a syntax error right after a bare C1 byte.
  for (const std::string& text : {"{\"\\u001b[2J\": 1, \"\\u001b[2J\": 2}"s,
                                  "{\"a\": \"\x9b"
                                  "2J\" x}"s,
                                  "{\"\x1b[2J\": 1}"s}) {
    const std::string error = JsonErrorOf(text);
    for (char c : error) {
      EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == '\x7f' || c == '\x9b') << error;
    }
  }
  EXPECT_NE(JsonErrorOf("{\"\\u001b[2J\": 1, \"\\u001b[2J\": 2}").find("at /\\u001b[2J: expected each key once"),
            std::string::npos);
}

}  // namespace
}  // namespace electsim
