#include "tools/electsim/external/plain_json.h"

#include <limits>

namespace electsim::external {

const PlainJsonObject::Member* PlainJsonObject::Find(std::string_view key) const {
  for (int i = 0; i < size_; ++i) {
    if (members_[i].key == key) return &members_[i];
  }
  return nullptr;
}

std::optional<int64_t> PlainJsonObject::Integer(std::string_view key) const {
  const Member* found = Find(key);
  if (found == nullptr || found->kind != Kind::kInteger) return std::nullopt;
  return found->integer;
}

std::optional<std::string_view> PlainJsonObject::String(std::string_view key) const {
  const Member* found = Find(key);
  if (found == nullptr || found->kind != Kind::kString) return std::nullopt;
  return found->text;
}

bool PlainJsonLine::Parse(std::string_view line) {
  line_ = line;
  at_ = 0;
  object_count_ = 1;
  objects_[0].size_ = 0;
  SkipSpace();
  if (!ParseObject(0, 0)) return false;
  SkipSpace();
  return at_ == line_.size();
}

const PlainJsonObject* PlainJsonLine::Nested(std::string_view key) const {
  const PlainJsonObject::Member* found = top().Find(key);
  if (found == nullptr || found->kind != PlainJsonObject::Kind::kObject) return nullptr;
  return &objects_[found->object];
}

void PlainJsonLine::SkipSpace() {
  while (at_ < line_.size() && (line_[at_] == ' ' || line_[at_] == '\t' || line_[at_] == '\n' || line_[at_] == '\r')) {
    ++at_;
  }
}

bool PlainJsonLine::ParseObject(int index, int depth) {
  PlainJsonObject& object = objects_[index];
  object.size_ = 0;
  if (at_ >= line_.size() || line_[at_] != '{') return false;
  ++at_;
  SkipSpace();
  if (at_ < line_.size() && line_[at_] == '}') {
    ++at_;
    return true;
  }
  while (true) {
    if (object.size_ == PlainJsonObject::kMaxMembers) return false;
    PlainJsonObject::Member& member = object.members_[object.size_];
    member = PlainJsonObject::Member();
    if (!ParseString(member.key)) return false;
    // A key twice: the full parser keeps the last value; not worth copying.
    if (object.Find(member.key) != nullptr) return false;
    SkipSpace();
    if (at_ >= line_.size() || line_[at_] != ':') return false;
    ++at_;
    SkipSpace();
    if (!ParseValue(member, depth)) return false;
    ++object.size_;
    SkipSpace();
    if (at_ >= line_.size()) return false;
    const char next = line_[at_++];
    if (next == '}') return true;
    if (next != ',') return false;
    SkipSpace();
  }
}

bool PlainJsonLine::ParseValue(PlainJsonObject::Member& member, int depth) {
  if (at_ >= line_.size()) return false;
  const char first = line_[at_];
  if (first == '"') {
    member.kind = PlainJsonObject::Kind::kString;
    return ParseString(member.text);
  }
  if (first == '{') {
    if (depth > 0 || object_count_ == kMaxObjects) return false;
    member.kind = PlainJsonObject::Kind::kObject;
    member.object = object_count_++;
    return ParseObject(member.object, depth + 1);
  }
  member.kind = PlainJsonObject::Kind::kInteger;
  return ParseInteger(member.integer);
}

bool PlainJsonLine::ParseString(std::string_view& out) {
  if (at_ >= line_.size() || line_[at_] != '"') return false;
  const size_t start = ++at_;
  while (at_ < line_.size()) {
    const char c = line_[at_];
    if (c == '"') {
      out = line_.substr(start, at_ - start);
      ++at_;
      return true;
    }
    // Escapes, control characters and UTF-8 are the full parser's to judge.
    if (c == '\\' || c < 0x20 || c > 0x7e) return false;
    ++at_;
  }
  return false;
}

bool PlainJsonLine::ParseInteger(int64_t& out) {
  const bool negative = at_ < line_.size() && line_[at_] == '-';
  if (negative) ++at_;
  const size_t digits_start = at_;
  // Accumulated as a negative number, so that int64's minimum fits.
  int64_t value = 0;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  while (at_ < line_.size() && line_[at_] >= '0' && line_[at_] <= '9') {
    const int digit = line_[at_] - '0';
    if (value < (kMin + digit) / 10) return false;
    value = value * 10 - digit;
    ++at_;
  }
  const size_t digit_count = at_ - digits_start;
  if (digit_count == 0) return false;
  if (digit_count > 1 && line_[digits_start] == '0') return false;  // a leading zero: not JSON
  // A fraction or an exponent: a float to the full parser.
  if (at_ < line_.size() && (line_[at_] == '.' || line_[at_] == 'e' || line_[at_] == 'E')) return false;
  if (!negative) {
    if (value == kMin) return false;  // past int64's maximum
    value = -value;
  }
  out = value;
  return true;
}

}  // namespace electsim::external
