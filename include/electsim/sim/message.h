// Messages and observations are flat records: a type plus a few integer
// fields, in the spirit of etcd's single raftpb.Message struct. A record's
// type is declared once, as a constant naming the type and its fields, so
// records copy without allocating, hash canonically into the trace and print
// as JSON without each algorithm writing its own encoder, and code reads
// fields by position or through a struct, never by comparing strings.
//
// Declaring a message:
//
//   struct RequestVote {
//     static constexpr sim::RecordType kType{"raft.request_vote", {"term", "last_index", "last_term"}};
//     int64_t term = 0;
//     int64_t last_index = 0;
//     int64_t last_term = 0;
//   };
//   ctx.Send(peer, RequestVote{.term = 3, .last_index = 7, .last_term = 2});
//   if (auto request = message.As<RequestVote>()) Grant(request->term);
//
// The struct's members are the type's fields, in order, all int64_t.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <type_traits>

#include "electsim/sim/check.h"

namespace sim {

// The type of a message or observation: its name and its fields' names, in
// order. Names must have static storage (string literals): records refer to
// them. Two RecordType objects with the same name are the same type.
class RecordType {
 public:
  static constexpr int kMaxFields = 6;

  constexpr RecordType(std::string_view name, std::initializer_list<std::string_view> fields)
      : name_(name), id_(Fnv1a(name)) {
    // A constant with too many fields does not compile: SIM_CHECK is not constexpr.
    SIM_CHECK(fields.size() <= kMaxFields, "a RecordType has at most kMaxFields fields");
    for (std::string_view field : fields) fields_[field_count_++] = field;
  }

  constexpr std::string_view name() const { return name_; }
  constexpr int field_count() const { return field_count_; }
  constexpr std::string_view field(int index) const { return fields_[index]; }
  // The position of the field named `field`, or -1.
  constexpr int IndexOf(std::string_view field) const {
    for (int i = 0; i < field_count_; ++i) {
      if (fields_[i] == field) return i;
    }
    return -1;
  }
  // FNV-1a of the name: compares types without comparing strings.
  constexpr uint64_t id() const { return id_; }

  friend bool operator==(const RecordType& a, const RecordType& b) {
    return &a == &b || (a.id_ == b.id_ && a.name_ == b.name_);
  }

 private:
  static constexpr uint64_t Fnv1a(std::string_view text) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (char c : text) {
      h ^= static_cast<unsigned char>(c);
      h *= 0x100000001b3ULL;
    }
    return h;
  }

  std::string_view name_;
  uint64_t id_ = 0;
  std::array<std::string_view, kMaxFields> fields_{};
  int field_count_ = 0;
};

// A struct that is a record: a `static constexpr RecordType kType` and one
// int64_t member per field, in order, and nothing else. It may stop short of
// the type's last fields: those are optional trailing fields (a key, say)
// that old writers never set, read by name (Payload::Get), so adding one to a
// type changes no existing record.
template <typename T>
concept Record = requires {
  { T::kType } -> std::convertible_to<const RecordType&>;
}
&&std::is_trivially_copyable_v<T>&& std::is_standard_layout_v<T>;

// One field of a record, as Payload::fields() yields them.
struct Field {
  std::string_view key;
  int64_t value = 0;
};

class Payload {
 public:
  static constexpr int kMaxFields = RecordType::kMaxFields;
  // How many of its type's fields a record struct holds.
  template <Record T>
  static constexpr int kStructFields = static_cast<int>(sizeof(T) / sizeof(int64_t));

  Payload() = default;
  // A record of `type` whose first values.size() fields are set; the rest
  // are absent (optional fields come last).
  Payload(const RecordType& type, std::initializer_list<int64_t> values = {}) : type_(&type) {
    SIM_CHECK(static_cast<int>(values.size()) <= type.field_count(), "more values than the record type has fields");
    for (int64_t value : values) values_[size_++] = value;
  }
  // A typed record, with every field of the struct set (or only its first `present`).
  template <Record T>
  Payload(const T& record, int present = kStructFields<T>) : type_(&T::kType) {
    static_assert(sizeof(T) % sizeof(int64_t) == 0 && kStructFields<T> <= T::kType.field_count(),
                  "a record struct has one int64_t member per field of its kType, up to some field");
    SIM_CHECK(present >= 0 && present <= kStructFields<T>, "present fields out of range");
    std::memcpy(values_.data(), &record, sizeof(T));
    size_ = present;
    for (int i = present; i < kMaxFields; ++i) values_[i] = 0;
  }

  // Nullptr for a default-constructed payload.
  const RecordType* type() const { return type_; }
  std::string_view type_name() const { return type_ == nullptr ? std::string_view() : type_->name(); }
  bool Is(const RecordType& type) const { return type_ != nullptr && *type_ == type; }
  template <Record T>
  bool Is() const {
    return Is(T::kType);
  }
  // The record as T when it is one (absent fields read 0).
  template <Record T>
  std::optional<T> As() const {
    if (!Is(T::kType)) return std::nullopt;
    T out;
    std::memcpy(static_cast<void*>(&out), values_.data(), sizeof(T));  // T is trivially copyable
    return out;
  }

  // Sets field `index`, which must be present or the first absent one.
  Payload& Set(int index, int64_t value) {
    SIM_CHECK(type_ != nullptr && index >= 0 && index <= size_ && index < type_->field_count(),
              "a field is set in order, within its record type");
    values_[index] = value;
    if (index == size_) ++size_;
    return *this;
  }

  // Fields present: the first size() of the type's fields.
  int size() const { return size_; }
  int64_t value(int index) const { return values_[index]; }
  bool Has(int index) const { return index >= 0 && index < size_; }

  // By field name: for tools and tests, not for hot paths. Set follows the
  // rule of Set(int, int64_t): present fields, or the first absent one.
  Payload& Set(std::string_view key, int64_t value) {
    const int index = type_ == nullptr ? -1 : type_->IndexOf(key);
    SIM_CHECK(index >= 0, "a field set by name is one of its record type's fields");
    return Set(index, value);
  }
  bool Has(std::string_view key) const { return type_ != nullptr && Has(type_->IndexOf(key)); }
  int64_t Get(std::string_view key, int64_t missing = 0) const {
    if (type_ == nullptr) return missing;
    const int index = type_->IndexOf(key);
    return Has(index) ? values_[index] : missing;
  }

  // The present fields, in order.
  class FieldIterator {
   public:
    FieldIterator(const Payload* payload, int index) : payload_(payload), index_(index) {}
    Field operator*() const { return {payload_->type_->field(index_), payload_->values_[index_]}; }
    FieldIterator& operator++() {
      ++index_;
      return *this;
    }
    bool operator!=(const FieldIterator& other) const { return index_ != other.index_; }

   private:
    const Payload* payload_;
    int index_;
  };
  struct FieldRange {
    const Payload* payload;
    FieldIterator begin() const { return {payload, 0}; }
    FieldIterator end() const { return {payload, payload->size_}; }
  };
  FieldRange fields() const { return {this}; }

 private:
  const RecordType* type_ = nullptr;
  std::array<int64_t, kMaxFields> values_{};
  int size_ = 0;
};

// What one process sends another over the simulated network.
using Message = Payload;

// An estimate of a message's size on the wire, computed from its payload
// alone so that it is the same on every run: a fixed 16-byte header (sender,
// receiver, type, length, as a framed RPC carries) plus, per field, a one-byte
// tag and the value as a protobuf zig-zag varint (1 byte below 64 in
// magnitude, up to 10). Real encodings differ; the estimate compares
// algorithms, it does not predict a deployment's traffic.
inline constexpr int64_t kMessageHeaderBytes = 16;
inline int64_t EstimatedEncodedBytes(const Message& message) {
  int64_t bytes = kMessageHeaderBytes;
  for (int i = 0; i < message.size(); ++i) {
    const int64_t value = message.value(i);
    const uint64_t zigzag = (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
    int64_t varint_bytes = 1;
    for (uint64_t rest = zigzag >> 7; rest != 0; rest >>= 7) ++varint_bytes;
    bytes += 1 + varint_bytes;
  }
  return bytes;
}
// What a process reports about itself for checkers (role, leader claim, ...).
using Observation = Payload;

}  // namespace sim
