// Messages and observations are flat records: a type plus a few named integer
// fields, in the spirit of etcd's single raftpb.Message struct. Flat records
// copy without allocating, hash canonically into the trace and print as JSON
// without each algorithm writing its own encoder.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "sim/check.h"

namespace sim {

// Keys and types must be string literals (static storage): records hold views.
struct Field {
  std::string_view key;
  int64_t value = 0;
};

class Payload {
 public:
  static constexpr int kMaxFields = 6;

  Payload() = default;
  explicit Payload(std::string_view type) : type_(type) {}

  // Adds or overwrites a field. A field past kMaxFields stops the process:
  // dropping it would make a message or observation silently lie.
  Payload& Set(std::string_view key, int64_t value) {
    for (int i = 0; i < count_; ++i) {
      if (fields_[i].key == key) {
        fields_[i].value = value;
        return *this;
      }
    }
    SIM_CHECK(count_ < kMaxFields, "a Payload holds at most kMaxFields fields");
    fields_[count_++] = Field{key, value};
    return *this;
  }

  std::string_view type() const { return type_; }
  bool Is(std::string_view type) const { return type_ == type; }
  bool Has(std::string_view key) const {
    for (int i = 0; i < count_; ++i) {
      if (fields_[i].key == key) return true;
    }
    return false;
  }
  int64_t Get(std::string_view key, int64_t missing = 0) const {
    for (int i = 0; i < count_; ++i) {
      if (fields_[i].key == key) return fields_[i].value;
    }
    return missing;
  }
  std::span<const Field> fields() const { return {fields_.data(), static_cast<size_t>(count_)}; }

 private:
  std::string_view type_;
  std::array<Field, kMaxFields> fields_{};
  int count_ = 0;
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
  for (const Field& field : message.fields()) {
    const uint64_t zigzag = (static_cast<uint64_t>(field.value) << 1) ^ static_cast<uint64_t>(field.value >> 63);
    int64_t varint_bytes = 1;
    for (uint64_t rest = zigzag >> 7; rest != 0; rest >>= 7) ++varint_bytes;
    bytes += 1 + varint_bytes;
  }
  return bytes;
}
// What a process reports about itself for checkers (role, leader claim, ...).
using Observation = Payload;

}  // namespace sim
