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

void TraceHasher::Mix(uint64_t word) {
  // One 64x64->128-bit multiply folded back to 64 bits (wyhash's "mum"): it
  // avalanches within a couple of words, and costs a third of a SplitMix64
  // finaliser. This runs several times per record of every run. Unlike the
  // finaliser it is not a bijection: two diverged traces can merge again, with
  // a chance of about 2^-64 per word, i.e. ~1e-12 over ten million records.
  const unsigned __int128 product =
      static_cast<unsigned __int128>(hash_ ^ word ^ 0xa0761d6478bd642fULL) * 0xe7037ed1a0b428dbULL;
  hash_ = static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}

namespace {
// Bytes in a fixed (big-endian) order, so the hash does not depend on the
// host's byte order; compilers turn this into one load and a byte swap.
uint64_t LoadBigEndian64(const unsigned char* p) {
  return (uint64_t{p[0]} << 56) | (uint64_t{p[1]} << 48) | (uint64_t{p[2]} << 40) | (uint64_t{p[3]} << 32) |
         (uint64_t{p[4]} << 24) | (uint64_t{p[5]} << 16) | (uint64_t{p[6]} << 8) | uint64_t{p[7]};
}
}  // namespace

void TraceHasher::MixBytes(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  size_t at = 0;
  for (; at + 8 <= text.size(); at += 8) Mix(LoadBigEndian64(bytes + at));
  if (at < text.size()) {
    uint64_t word = 0;
    for (; at < text.size(); ++at) word = (word << 8) | bytes[at];
    Mix(word);
  }
}

void TraceHasher::OnRecord(const TraceRecord& r) {
  ++records_;
  Mix(static_cast<uint64_t>(r.time.ns()));
  Mix((uint64_t{r.node.value()} << 32) | r.peer.value());
  Mix(r.message_id);
  Mix(static_cast<uint64_t>(r.local_time.ns()));
  Mix(static_cast<uint64_t>(r.value));
  // One word says what follows: the kind, whether there is a payload and
  // how many of its fields are present, and the detail's length (so that
  // ("ab", "c") and ("a", "bc") differ).
  const uint64_t fields = r.payload == nullptr ? 0 : static_cast<uint64_t>(r.payload->size());
  Mix((static_cast<uint64_t>(r.kind) << 56) | (uint64_t{r.payload != nullptr} << 55) | (fields << 48) |
      (r.detail.size() & ((uint64_t{1} << 48) - 1)));
  if (!r.detail.empty()) MixBytes(r.detail);
  if (r.payload != nullptr) {
    // The type by its name's FNV-1a (RecordType::id), the fields by value:
    // the names of a type's fields are fixed by the type.
    Mix(r.payload->type() == nullptr ? 0 : r.payload->type()->id());
    for (int i = 0; i < r.payload->size(); ++i) Mix(static_cast<uint64_t>(r.payload->value(i)));
  }
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
