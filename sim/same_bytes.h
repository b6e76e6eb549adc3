// Equality of short strings (storage keys, option names) a word at a time,
// inline: for strings of a few to a few dozen bytes, the call to memcmp that
// std::string_view's == makes costs more than the compare.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace sim {

// A word of bytes in the host's order: for compares and in-process hashes,
// never for anything a trace or a file holds.
template <typename Word>
inline Word LoadNative(const char* p) {
  Word word;
  std::memcpy(&word, p, sizeof word);
  return word;
}

inline bool SameBytes(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  if (n >= 8) {
    for (size_t at = 0; at + 8 < n; at += 8) {
      if (LoadNative<uint64_t>(p + at) != LoadNative<uint64_t>(q + at)) return false;
    }
    // The last eight, overlapping the loop's.
    return LoadNative<uint64_t>(p + n - 8) == LoadNative<uint64_t>(q + n - 8);
  }
  if (n >= 4) {
    return LoadNative<uint32_t>(p) == LoadNative<uint32_t>(q) &&
           LoadNative<uint32_t>(p + n - 4) == LoadNative<uint32_t>(q + n - 4);
  }
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != q[i]) return false;
  }
  return true;
}

}  // namespace sim
