// Equality of short strings (storage keys, option names) a word at a time,
// inline: for strings of a few to a few dozen bytes, the call to memcmp that
// std::string_view's == makes costs more than the compare.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace sim {

inline bool SameBytes(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  const auto load64 = [](const char* at) {
    uint64_t word;
    std::memcpy(&word, at, sizeof word);
    return word;
  };
  const auto load32 = [](const char* at) {
    uint32_t word;
    std::memcpy(&word, at, sizeof word);
    return word;
  };
  if (n >= 8) {
    for (size_t at = 0; at + 8 < n; at += 8) {
      if (load64(p + at) != load64(q + at)) return false;
    }
    return load64(p + n - 8) == load64(q + n - 8);  // the last eight, overlapping the loop's
  }
  if (n >= 4) return load32(p) == load32(q) && load32(p + n - 4) == load32(q + n - 4);
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != q[i]) return false;
  }
  return true;
}

}  // namespace sim
