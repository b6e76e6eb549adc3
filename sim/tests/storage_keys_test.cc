// StorageKeys against a std::map of the numbers handed out, through enough
// keys to grow the table several times.
#include "sim/storage_keys.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sim/same_bytes.h"

namespace sim {
namespace {

TEST(StorageKeys, NumbersFollowFirstUseAndEveryKeyIsFoundAgain) {
  StorageKeys keys;
  std::map<std::string, StorageKeyId> given;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 2000; ++i) {
      // Keys of many lengths, sharing prefixes, so that hashes collide in the table.
      const std::string key = absl::StrCat("log.", i, std::string(static_cast<size_t>(i % 11), 'x'));
      const StorageKeyId id = keys.Intern(key);
      auto [it, fresh] = given.emplace(key, id);
      if (fresh) {
        EXPECT_EQ(id, given.size() - 1) << key;
      } else {
        EXPECT_EQ(id, it->second) << key;
      }
    }
  }
  EXPECT_EQ(keys.size(), given.size());
  for (const auto& [key, id] : given) {
    EXPECT_EQ(keys.Find(key), id) << key;
    EXPECT_EQ(keys.Name(id), key);
  }
}

TEST(StorageKeys, AKeyNeverInternedIsNotFound) {
  StorageKeys keys;
  EXPECT_EQ(keys.Find("term"), std::nullopt);
  keys.Intern("term");
  EXPECT_EQ(keys.Find("term"), 0u);
  EXPECT_EQ(keys.Find("ter"), std::nullopt);
  EXPECT_EQ(keys.Find("term "), std::nullopt);
  EXPECT_EQ(keys.Find(""), std::nullopt);
  EXPECT_EQ(keys.Intern(""), 1u);  // the empty key is a key like any other
  EXPECT_EQ(keys.Find(""), 1u);
}

// A simulator's Reset clears its table for the next run: cleared, the table
// must number keys as a new one does and know none of the keys before.
TEST(StorageKeys, ClearedItNumbersKeysAsANewTableDoes) {
  StorageKeys reused;
  for (int i = 0; i < 300; ++i) reused.Intern(absl::StrCat("old.", i));
  reused.Clear();
  EXPECT_EQ(reused.size(), 0u);
  StorageKeys fresh;
  for (int i = 0; i < 300; ++i) {
    EXPECT_EQ(reused.Find(absl::StrCat("old.", i)), std::nullopt) << i;
    const std::string key = absl::StrCat("new.", i % 7 == 0 ? "old." : "", i);
    EXPECT_EQ(reused.Intern(key), fresh.Intern(key)) << key;
  }
  EXPECT_EQ(reused.size(), fresh.size());
  for (StorageKeyId id = 0; id < fresh.size(); ++id) {
    EXPECT_EQ(reused.Name(id), fresh.Name(id));
    EXPECT_EQ(reused.Find(fresh.Name(id)), id);
  }
}

// SameBytes reads words, overlapping at the end: a difference in any one
// byte, at every length, must still tell two strings apart.
TEST(SameBytes, ADifferenceInAnyByteAtAnyLengthIsSeen) {
  const std::string base = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEF";
  for (size_t n = 0; n <= base.size(); ++n) {
    const std::string a = base.substr(0, n);
    std::string copy = a;  // equal bytes at another address
    EXPECT_TRUE(SameBytes(a, copy)) << n;
    for (size_t i = 0; i < n; ++i) {
      std::string b = a;
      b[i] = static_cast<char>(b[i] ^ 0x20);
      EXPECT_FALSE(SameBytes(a, b)) << n << " bytes, differing at " << i;
    }
    if (n > 0) {
      EXPECT_FALSE(SameBytes(a, a.substr(0, n - 1))) << n;
    }
  }
}

}  // namespace
}  // namespace sim
