// EscapeForTerminal: nothing a terminal would act on gets through raw.
#include "tools/electsim/io/terminal_text.h"

#include <string>

#include "gtest/gtest.h"

namespace electsim {
namespace {

using namespace std::string_literals;

// True when `text` holds only printable ASCII or multi-byte UTF-8 lead and
// continuation bytes: no C0 control, no DEL.
bool NoRawControls(const std::string& text) {
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) return false;
  }
  return true;
}

TEST(EscapeForTerminal, EscapeSequencesBecomeVisible) {
  EXPECT_EQ(EscapeForTerminal("a\x1b[2Jb"), "a\\u001b[2Jb");                       // clear screen
  EXPECT_EQ(EscapeForTerminal("\x1b]52;c;aGk=\x07"), "\\u001b]52;c;aGk=\\u0007");  // OSC 52 clipboard write
  EXPECT_EQ(EscapeForTerminal("line\nnext\ttab\rcr"), "line\\nnext\\ttab\\rcr");
  EXPECT_EQ(EscapeForTerminal("nul\0here"s), "nul\\u0000here");
  EXPECT_EQ(EscapeForTerminal("del\x7f"), "del\\u007f");
}

TEST(EscapeForTerminal, C1ControlsAndDirectionOverridesAreEscaped) {
  EXPECT_EQ(EscapeForTerminal("\xc2\x9b"
                              "2J"),
            "\\u009b2J");  // CSI as a UTF-8 code point
  EXPECT_EQ(EscapeForTerminal("abc\xe2\x80\xae"
                              "cba"),
            "abc\\u202ecba");                                 // right-to-left override
  EXPECT_EQ(EscapeForTerminal("\xe2\x81\xa6x"), "\\u2066x");  // left-to-right isolate
}

TEST(EscapeForTerminal, MalformedUtf8IsShownByteByByte) {
  EXPECT_EQ(EscapeForTerminal("\x9b"
                              "2J"),
            "\\x9b2J");                                             // a bare C1 byte, as 8-bit terminals read it
  EXPECT_EQ(EscapeForTerminal("\xc3"), "\\xc3");                    // cut sequence
  EXPECT_EQ(EscapeForTerminal("\xc0\xaf"), "\\xc0\\xaf");           // overlong "/"
  EXPECT_EQ(EscapeForTerminal("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(EscapeForTerminal("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
}

TEST(EscapeForTerminal, PrintableTextPassesUnchanged) {
  for (const std::string& text : {"plain ascii ~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./"s,
                                  "caf\xc3\xa9 \xe2\x9c\x93 \xe6\x97\xa5"s, "emoji \xf0\x9f\x98\x80"s, ""s}) {
    EXPECT_EQ(EscapeForTerminal(text), text);
  }
}

TEST(EscapeForTerminal, EscapingTwiceChangesNothingMore) {
  const std::string hostile = "\x1b[31m\\u001b\xc2\x9b\x9b\xe2\x80\xae\n\0end"s;
  const std::string once = EscapeForTerminal(hostile);
  EXPECT_TRUE(NoRawControls(once)) << once;
  EXPECT_EQ(EscapeForTerminal(once), once);
}

TEST(EscapeForTerminal, NoByteValueGetsThroughRaw) {
  std::string every_byte;
  for (int c = 0; c < 256; ++c) every_byte.push_back(static_cast<char>(c));
  const std::string escaped = EscapeForTerminal(every_byte);
  EXPECT_TRUE(NoRawControls(escaped)) << escaped;
  // Lone bytes from 0x80 up are never well-formed UTF-8 on their own.
  EXPECT_EQ(escaped.find('\x9b'), std::string::npos);
}

}  // namespace
}  // namespace electsim
