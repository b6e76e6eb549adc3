#include "tools/electsim/io/terminal_text.h"

#include <cstdint>

#include "fmt/format.h"

namespace electsim {
namespace {

// Code points that are well-formed but still steer the terminal or hide text.
bool IsInvisibleControl(char32_t c) {
  return (c >= 0x80 && c <= 0x9f) || c == 0x061c || c == 0x200e || c == 0x200f || (c >= 0x2028 && c <= 0x202e) ||
         (c >= 0x2066 && c <= 0x2069);
}

// Length of the well-formed UTF-8 sequence starting at text[i] (2 to 4), with
// its code point, or 0 when the bytes there are not one (stray continuation
// bytes, overlong forms, surrogates, values past U+10FFFF, a cut sequence).
size_t DecodeUtf8(std::string_view text, size_t i, char32_t& code_point) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[i + k]); };
  const uint8_t lead = byte(0);
  size_t length;
  char32_t min;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    min = 0x80;
    code_point = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    min = 0x800;
    code_point = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    min = 0x10000;
    code_point = lead & 0x07;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(k) & 0xc0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(k) & 0x3f);
  }
  if (code_point < min || code_point > 0x10ffff || (code_point >= 0xd800 && code_point <= 0xdfff)) return 0;
  return length;
}

}  // namespace

std::string EscapeForTerminal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<uint8_t>(text[i]);
    if (c < 0x80) {
      if (c >= 0x20 && c < 0x7f) {
        out.push_back(static_cast<char>(c));
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\t') {
        out += "\\t";
      } else if (c == '\r') {
        out += "\\r";
      } else {
        out += fmt::format("\\u{:04x}", c);
      }
      ++i;
      continue;
    }
    char32_t code_point = 0;
    const size_t length = DecodeUtf8(text, i, code_point);
    if (length == 0) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
      continue;
    }
    if (IsInvisibleControl(code_point)) {
      out += fmt::format("\\u{:04x}", static_cast<uint32_t>(code_point));
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

}  // namespace electsim
