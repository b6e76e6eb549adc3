#include "sim/trace.h"

#include "electsim/sim/check.h"
#include "fmt/format.h"

namespace sim {

ObservationTypes::ObservationTypes(std::initializer_list<const RecordType*> types) : all_(false) {
  for (const RecordType* type : types) Add(type);
}

void ObservationTypes::Add(const RecordType* type) {
  // A type named twice is harmless (the simulator sets one bit per sink);
  // not searching for it keeps a run's set-up short.
  SIM_CHECK(count_ < kMaxTypes, "an ObservationTypes names at most kMaxTypes types");
  types_[count_++] = type;
}

bool ObservationTypes::Has(const RecordType& type) const {
  if (all_) return true;
  for (const RecordType* named : types()) {
    if (*named == type) return true;
  }
  return false;
}

ObservationTypes ObservationTypes::With(const ObservationTypes& other) const {
  if (all_ || other.all_) return All();
  ObservationTypes both = *this;
  for (const RecordType* type : other.types()) both.Add(type);
  return both;
}

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

void TraceHasher::OnRecord(const TraceRecord& r) { Add(r); }

void TraceHasher::KeepCheckpoints(uint64_t every, size_t max) {
  SIM_CHECK(every != 0 && (every & (every - 1)) == 0 && max >= 2, "checkpoint spacing is a power of two");
  checkpoint_mask_ = every - 1;
  max_checkpoints_ = max;
  checkpoints_.clear();
  checkpoints_.reserve(max);
}

void TraceHasher::Checkpoint() {
  if (checkpoints_.size() == max_checkpoints_) {
    // Keep the checkpoints at multiples of twice the spacing.
    for (size_t i = 0; 2 * i + 1 < checkpoints_.size(); ++i) checkpoints_[i] = checkpoints_[2 * i + 1];
    checkpoints_.resize(checkpoints_.size() / 2);
    checkpoint_mask_ = 2 * checkpoint_mask_ + 1;
    if ((records_ & checkpoint_mask_) != 0) return;
  }
  checkpoints_.push_back(hash_);
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
