#include "sim/trace.h"


#include "fmt/format.h"

namespace sim {

std::string_view TraceKindName(TraceKind kind) {
  switch (kind) {
    case TraceKind::kStart: return "start";
    case TraceKind::kSend: return "send";
    case TraceKind::kDrop: return "drop";
    case TraceKind::kDuplicate: return "duplicate";
    case TraceKind::kDeliver: return "deliver";
    case TraceKind::kTimerSet: return "timer_set";
    case TraceKind::kTimerCancel: return "timer_cancel";
    case TraceKind::kTimerFire: return "timer_fire";
    case TraceKind::kCrash: return "crash";
    case TraceKind::kRestart: return "restart";
    case TraceKind::kPause: return "pause";
    case TraceKind::kResume: return "resume";
    case TraceKind::kClock: return "clock";
    case TraceKind::kNetwork: return "network";
    case TraceKind::kPersist: return "persist";
    case TraceKind::kObserve: return "observe";
    case TraceKind::kNote: return "note";
    case TraceKind::kWrite: return "write";
    case TraceKind::kSync: return "sync";
  }
  return "unknown";
}

namespace {
// wyhash's secrets: odd, with balanced bits.
constexpr uint64_t kSecret0 = 0xa0761d6478bd642fULL;
constexpr uint64_t kSecret1 = 0xe7037ed1a0b428dbULL;
constexpr uint64_t kSecret2 = 0x8ebc6af09c88c6e3ULL;
constexpr uint64_t kSecret3 = 0x589965cc75374cc3ULL;

// A 64x64->128-bit product folded back to 64 bits (wyhash's "mum").
inline uint64_t Mum(uint64_t a, uint64_t b) {
  const unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}

// Word pair `pair` of a record: both words keyed by their position, so that
// reordering words or pairs changes the sum.
inline uint64_t MumPair(uint64_t first, uint64_t second, uint64_t pair) {
  const uint64_t salt = pair * kSecret2;
  return Mum(first ^ (kSecret0 + salt), second ^ (kSecret1 + salt));
}

// Bytes in a fixed (big-endian) order, so the hash does not depend on the
// host's byte order; compilers turn this into one load and a byte swap.
uint64_t LoadBigEndian64(const unsigned char* p) {
  return (uint64_t{p[0]} << 56) | (uint64_t{p[1]} << 48) | (uint64_t{p[2]} << 40) | (uint64_t{p[3]} << 32) |
         (uint64_t{p[4]} << 24) | (uint64_t{p[5]} << 16) | (uint64_t{p[6]} << 8) | uint64_t{p[7]};
}

// The words after a record's fixed six, paired in order from pair 3.
class TailDigest {
 public:
  void Add(uint64_t word) {
    if (!has_pending_) {
      pending_ = word;
      has_pending_ = true;
      return;
    }
    sum_ += MumPair(pending_, word, pair_++);
    has_pending_ = false;
  }
  void AddBytes(std::string_view text) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    size_t at = 0;
    for (; at + 8 <= text.size(); at += 8) Add(LoadBigEndian64(bytes + at));
    if (at < text.size()) {
      uint64_t word = 0;
      for (; at < text.size(); ++at) word = (word << 8) | bytes[at];
      Add(word);
    }
  }
  // An odd word out is paired with 0 (the header fixes the word count).
  uint64_t Finish() {
    if (has_pending_) Add(0);
    return sum_;
  }

 private:
  uint64_t sum_ = 0;
  uint64_t pending_ = 0;
  uint64_t pair_ = 3;
  bool has_pending_ = false;
};
}  // namespace

void TraceHasher::OnRecord(const TraceRecord& r) {
  ++records_;
  // One word says what follows: the kind, whether there is a payload and
  // how many of its fields are present, and the detail's length (so that
  // ("ab", "c") and ("a", "bc") differ).
  const uint64_t fields = r.payload == nullptr ? 0 : static_cast<uint64_t>(r.payload->size());
  const uint64_t header = (static_cast<uint64_t>(r.kind) << 56) | (uint64_t{r.payload != nullptr} << 55) |
                          (fields << 48) | (r.detail.size() & ((uint64_t{1} << 48) - 1));
  // The record's words are multiplied in pairs that do not depend on one
  // another, so they overlap in the pipeline; only one multiply per record
  // chains into the state. (Mixing word by word into the state made every
  // multiply wait for the previous one: a delivery cost 1.6x with hashing.)
  uint64_t sum = MumPair(static_cast<uint64_t>(r.time.ns()), (uint64_t{r.node.value()} << 32) | r.peer.value(), 0) +
                 MumPair(r.message_id, static_cast<uint64_t>(r.local_time.ns()), 1) +
                 MumPair(static_cast<uint64_t>(r.value), header, 2);
  if (r.detail.empty() && r.payload != nullptr) {
    // The common tail, a message or observation without text: its type and
    // fields, paired without TailDigest's bookkeeping.
    const sim::Payload& payload = *r.payload;
    uint64_t words[Payload::kMaxFields + 2];
    int count = 0;
    words[count++] = payload.type() == nullptr ? 0 : payload.type()->id();
    for (int i = 0; i < payload.size(); ++i) words[count++] = static_cast<uint64_t>(payload.value(i));
    words[count] = 0;  // the odd word out's partner
    for (int at = 0; at < count; at += 2) sum += MumPair(words[at], words[at + 1], 3 + static_cast<uint64_t>(at / 2));
  } else if (!r.detail.empty() || r.payload != nullptr) {
    TailDigest tail;
    if (!r.detail.empty()) tail.AddBytes(r.detail);
    if (r.payload != nullptr) {
      // The type by its name's FNV-1a (RecordType::id), the fields by value:
      // the names of a type's fields are fixed by the type.
      tail.Add(r.payload->type() == nullptr ? 0 : r.payload->type()->id());
      for (int i = 0; i < r.payload->size(); ++i) tail.Add(static_cast<uint64_t>(r.payload->value(i)));
    }
    sum += tail.Finish();
  }
  hash_ = Mum(hash_ ^ kSecret0, sum ^ kSecret3);
}

std::string FormatTraceHash(uint64_t hash) { return fmt::format("0x{:016x}", hash); }

std::optional<uint64_t> ParseTraceHash(std::string_view text) {
  if (text.size() != 18 || text.substr(0, 2) != "0x") return std::nullopt;
  uint64_t hash = 0;
  for (char c : text.substr(2)) {
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return std::nullopt;
    hash = hash << 4 | static_cast<uint64_t>(digit);
  }
  return hash;
}

void AppendJsonString(std::string& out, std::string_view text) {
  out.push_back('"');
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

std::string TraceRecordToJson(const TraceRecord& r) {
  std::string out;
  out.reserve(160);
  fmt::format_to(std::back_inserter(out), R"({{"i":{},"t":{},"kind":"{}")", r.index, r.time.ns(),
                 TraceKindName(r.kind));
  if (r.node != kNoNode) fmt::format_to(std::back_inserter(out), R"(,"node":{})", r.node.value());
  if (r.peer != kNoNode) fmt::format_to(std::back_inserter(out), R"(,"peer":{})", r.peer.value());
  if (r.message_id != 0) fmt::format_to(std::back_inserter(out), R"(,"msg":{})", r.message_id);
  fmt::format_to(std::back_inserter(out), R"(,"local":{})", r.local_time.ns());
  if (r.value != 0) fmt::format_to(std::back_inserter(out), R"(,"value":{})", r.value);
  if (!r.detail.empty()) {
    out += R"(,"detail":)";
    AppendJsonString(out, r.detail);
  }
  if (r.payload != nullptr) {
    out += R"(,"type":)";
    AppendJsonString(out, r.payload->type_name());
    out += R"(,"fields":{)";
    bool first = true;
    for (const Field& f : r.payload->fields()) {
      if (!first) out.push_back(',');
      first = false;
      AppendJsonString(out, f.key);
      fmt::format_to(std::back_inserter(out), ":{}", f.value);
    }
    out.push_back('}');
  }
  out.push_back('}');
  return out;
}

}  // namespace sim
