#include "sim/trace.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
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
  }
  return "unknown";
}

void TraceHasher::Mix(uint64_t word) {
  // Order-sensitive: each word is folded through a SplitMix64-style finaliser.
  uint64_t z = (hash_ ^ word) + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  hash_ = z ^ (z >> 31);
}

void TraceHasher::MixText(std::string_view text) {
  Mix(text.size());
  uint64_t word = 0;
  int filled = 0;
  for (unsigned char c : text) {
    word = (word << 8) | c;
    if (++filled == 8) {
      Mix(word);
      word = 0;
      filled = 0;
    }
  }
  if (filled > 0) Mix(word);
}

void TraceHasher::OnRecord(const TraceRecord& r) {
  ++records_;
  Mix(static_cast<uint64_t>(r.time.ns()));
  Mix(static_cast<uint64_t>(r.kind));
  Mix(r.node.value());
  Mix(r.peer.value());
  Mix(r.message_id);
  Mix(static_cast<uint64_t>(r.local_time.ns()));
  Mix(static_cast<uint64_t>(r.value));
  MixText(r.detail);
  if (r.payload != nullptr) {
    MixText(r.payload->type());
    for (const Field& f : r.payload->fields()) {
      MixText(f.key);
      Mix(static_cast<uint64_t>(f.value));
    }
  }
}

std::string FormatTraceHash(uint64_t hash) { return fmt::format("0x{:016x}", hash); }

namespace {
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
}  // namespace

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
    AppendJsonString(out, r.payload->type());
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

absl::StatusOr<std::unique_ptr<JsonlTraceWriter>> JsonlTraceWriter::Open(const std::string& path) {
  const std::string temp = path + ".tmp";
  std::FILE* file = std::fopen(temp.c_str(), "wb");
  if (file == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": cannot open for writing: ", std::strerror(errno)));
  }
  return std::unique_ptr<JsonlTraceWriter>(new JsonlTraceWriter(path, file));
}

JsonlTraceWriter::~JsonlTraceWriter() {
  if (file_ != nullptr) {
    std::fclose(file_);
    std::remove((path_ + ".tmp").c_str());
  }
}

void JsonlTraceWriter::OnRecord(const TraceRecord& record) {
  if (write_failed_) return;
  std::string line = TraceRecordToJson(record);
  line.push_back('\n');
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size()) write_failed_ = true;
}

absl::Status JsonlTraceWriter::Commit() {
  if (file_ == nullptr) return absl::FailedPreconditionError("trace already committed");
  const bool close_failed = std::fclose(file_) != 0;
  file_ = nullptr;
  const std::string temp = path_ + ".tmp";
  if (write_failed_ || close_failed) {
    std::remove(temp.c_str());
    return absl::InternalError(absl::StrCat(path_, ": write failed"));
  }
  if (std::rename(temp.c_str(), path_.c_str()) != 0) {
    std::remove(temp.c_str());
    return absl::InternalError(absl::StrCat(path_, ": cannot rename into place: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view content) {
  const std::string temp = path + ".tmp";
  std::FILE* file = std::fopen(temp.c_str(), "wb");
  if (file == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot open for writing: ", std::strerror(errno)));
  }
  const bool wrote = std::fwrite(content.data(), 1, content.size(), file) == content.size();
  const bool closed = std::fclose(file) == 0;
  if (!wrote || !closed || std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    return absl::InternalError(absl::StrCat(path, ": write failed"));
  }
  return absl::OkStatus();
}

}  // namespace sim
