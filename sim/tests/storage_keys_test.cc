// StorageKeys against a std::map of the numbers handed out, through enough
// keys to grow the table several times.
#include "sim/storage_keys.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

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

}  // namespace
}  // namespace sim
