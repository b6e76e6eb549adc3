// A reader for the plain shape nearly every step-protocol line has: one JSON
// object whose members are integers, strings without escapes, or (one level
// down) objects of the same two kinds. A step of an external node reads a
// few such lines; building a full JSON document for each was about a tenth
// of an etcd-raft campaign's CPU time. Anything else (whitespace aside) is
// "not plain", and the caller reads the line with the full JSON parser,
// which also words every complaint: this reader accepts nothing that parser
// would read differently.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace electsim::external {

class PlainJsonObject {
 public:
  enum class Kind : uint8_t { kInteger, kString, kObject };
  struct Member {
    std::string_view key;
    Kind kind = Kind::kInteger;
    int64_t integer = 0;
    std::string_view text;  // a string's contents
    int object = -1;        // a nested object's index in the line's objects
  };
  static constexpr int kMaxMembers = 16;

  int size() const { return size_; }
  const Member& member(int i) const { return members_[i]; }
  const Member* Find(std::string_view key) const;
  std::optional<int64_t> Integer(std::string_view key) const;
  std::optional<std::string_view> String(std::string_view key) const;

 private:
  friend class PlainJsonLine;
  std::array<Member, kMaxMembers> members_;
  int size_ = 0;
};

// One line: the top-level object (objects()[0]) and the objects nested in it.
class PlainJsonLine {
 public:
  static constexpr int kMaxObjects = 4;

  // False when `line` is not plain: not one object, a float, a number out of
  // int64's range, an escape or a byte outside printable ASCII in a string,
  // a key twice in one object, an array, true, false, null, deeper nesting,
  // more than kMaxMembers members, or anything after the object.
  bool Parse(std::string_view line);
  const PlainJsonObject& top() const { return objects_[0]; }
  // The object member `key` of the top-level object holds, or nullptr.
  const PlainJsonObject* Nested(std::string_view key) const;

 private:
  bool ParseObject(int index, int depth);
  bool ParseValue(PlainJsonObject::Member& member, int depth);
  bool ParseString(std::string_view& out);
  bool ParseInteger(int64_t& out);
  void SkipSpace();

  std::string_view line_;
  size_t at_ = 0;
  std::array<PlainJsonObject, kMaxObjects> objects_;
  int object_count_ = 0;
};

}  // namespace electsim::external
