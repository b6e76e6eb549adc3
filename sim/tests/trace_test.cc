#include "sim/trace.h"

#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace sim {
namespace {

constexpr RecordType kM{"m", {"term"}};
constexpr RecordType kVote{"raft.vote", {"term", "granted"}};

TEST(Trace_Hash, SensitiveToEveryFieldAndOrder) {
  const Message message(kM, {3});
  TraceRecord base{.time = TimeNs(5),
                   .kind = TraceKind::kSend,
                   .node = NodeId(0),
                   .peer = NodeId(1),
                   .message_id = 1,
                   .payload = &message};
  auto hash_of = [](std::vector<TraceRecord> records) {
    TraceHasher hasher;
    for (const auto& r : records) hasher.OnRecord(r);
    return hasher.hash();
  };
  const uint64_t h = hash_of({base});
  TraceRecord other_time = base;
  other_time.time = TimeNs(6);
  const Message other_message(kM, {4});
  TraceRecord other_field = base;
  other_field.payload = &other_message;
  TraceRecord other_kind = base;
  other_kind.kind = TraceKind::kDeliver;
  EXPECT_NE(h, hash_of({other_time}));
  EXPECT_NE(h, hash_of({other_field}));
  EXPECT_NE(h, hash_of({other_kind}));
  EXPECT_NE(hash_of({base, other_time}), hash_of({other_time, base}));
  EXPECT_EQ(h, hash_of({base}));
  // Words are multiplied in pairs and summed: swapping the two words of a
  // pair, or two fields, or moving a value to another pair must still show.
  TraceRecord swapped_in_pair = base;
  swapped_in_pair.message_id = 0;
  swapped_in_pair.local_time = TimeNs(1);
  EXPECT_NE(h, hash_of({swapped_in_pair}));
  const Message vote(kVote, {2, 1});
  const Message vote_swapped(kVote, {1, 2});
  TraceRecord with_vote = base;
  with_vote.payload = &vote;
  TraceRecord with_vote_swapped = base;
  with_vote_swapped.payload = &vote_swapped;
  EXPECT_NE(hash_of({with_vote}), hash_of({with_vote_swapped}));
  TraceRecord value_not_id = base;
  value_not_id.message_id = 0;
  value_not_id.value = 1;
  EXPECT_NE(h, hash_of({value_not_id}));
  EXPECT_EQ(FormatTraceHash(0xabc), "0x0000000000000abc");
}

// Pins the hash function (docs/trace.md, "The trace hash"): these records
// must hash to this value with any compiler, standard library and byte
// order, or committed repro files stop replaying. The value was computed by
// an independent Python rendering of that specification (a record's words
// multiplied in position-keyed pairs and summed, one 128-bit multiply-fold
// per record into the state; a header word of kind, payload presence, field
// count and detail length; text as big-endian words; a payload as the FNV-1a
// of its type name and its field values).
TEST(Trace_Hash, KnownAnswer) {
  const Message message(kVote, {2, 1});
  TraceHasher hasher;
  hasher.OnRecord({.time = TimeNs(10),
                   .kind = TraceKind::kDeliver,
                   .node = NodeId(1),
                   .peer = NodeId(0),
                   .message_id = 9,
                   .local_time = TimeNs(11),
                   .payload = &message});
  // 13 bytes of text: one whole 8-byte word and a 5-byte tail; negative values.
  hasher.OnRecord(
      {.time = TimeNs(12), .kind = TraceKind::kNote, .local_time = TimeNs(-3), .value = -1, .detail = "hello, world!"});
  EXPECT_EQ(FormatTraceHash(hasher.hash()), "0x40d1ee260fa0c44d");
  EXPECT_EQ(hasher.records(), 2u);
}

// A record with text and no payload (a storage key, a note) takes a path of
// its own in TraceHasher::Add; it must hash as the generic one, the text's
// big-endian words through TailDigest, does, for every length around the
// word and pair boundaries.
TEST(Trace_Hash, TextAloneHashesAsTheGenericPathForEveryLength) {
  using namespace trace_hash_internal;
  const std::string text = "log.12345.term-and-a-longer-tail-of-text!";
  for (size_t n = 1; n <= text.size(); ++n) {
    const TraceRecord r{.time = TimeNs(7),
                        .kind = TraceKind::kWrite,
                        .node = NodeId(2),
                        .local_time = TimeNs(8),
                        .value = -5,
                        .detail = std::string_view(text).substr(0, n)};
    const uint64_t header = (static_cast<uint64_t>(TraceKind::kWrite) << 56) | n;
    uint64_t sum = MumPair(7, uint64_t{2} << 32 | r.peer.value(), 0) + MumPair(0, 8, 1) +
                   MumPair(static_cast<uint64_t>(int64_t{-5}), header, 2);
    TailDigest tail;
    tail.AddBytes(r.detail);
    sum += tail.Finish();
    const uint64_t expected = Mum(0x6a09e667f3bcc909ULL ^ kSecret0, sum ^ kSecret3);
    TraceHasher hasher;
    hasher.Add(r);
    EXPECT_EQ(FormatTraceHash(hasher.hash()), FormatTraceHash(expected)) << n << " bytes";
  }
}

TEST(Trace_HashCheckpoints, EvenlySpacedHashesThinnedWhenFull) {
  // 1000 records, a checkpoint every 4 kept up to 8: the spacing doubles
  // whenever 8 are kept, ending at 128 (7 checkpoints, at 128, 256, ... 896).
  TraceHasher checkpointed;
  checkpointed.KeepCheckpoints(4, 8);
  TraceHasher plain;
  std::vector<uint64_t> after;  // plain hash after each record
  for (uint64_t i = 0; i < 1000; ++i) {
    const TraceRecord r{.index = i, .time = TimeNs(static_cast<int64_t>(i)), .kind = TraceKind::kNote};
    checkpointed.Add(r);
    plain.Add(r);
    after.push_back(plain.hash());
  }
  EXPECT_EQ(checkpointed.hash(), plain.hash());  // keeping checkpoints changes no hash
  EXPECT_EQ(checkpointed.checkpoint_every(), 128u);
  ASSERT_EQ(checkpointed.checkpoints().size(), 7u);
  for (size_t i = 0; i < checkpointed.checkpoints().size(); ++i) {
    EXPECT_EQ(checkpointed.checkpoints()[i], after[(i + 1) * 128 - 1]) << i;
  }
  TraceHasher none;
  none.Add(TraceRecord{});
  EXPECT_TRUE(none.checkpoints().empty());
}

TEST(Trace_HashText, ParseInvertsFormatAndRejectsOtherText) {
  for (uint64_t hash : {uint64_t{0}, uint64_t{0xa141845f09a5689b}, ~uint64_t{0}}) {
    EXPECT_EQ(ParseTraceHash(FormatTraceHash(hash)), hash);
  }
  for (const char* text : {"", "0x", "banana", "0XA141845F09A5689B", "0xA141845F09A5689B", "0x0a141845f09a5689b",
                           "a141845f09a5689b", "0xa141845f09a5689"}) {
    EXPECT_EQ(ParseTraceHash(text), std::nullopt) << text;
  }
}

TEST(Trace_Json, OneObjectPerRecordWithPayloadFields) {
  const Message message(kVote, {2, 1});
  TraceRecord r{.index = 4,
                .time = TimeNs(10),
                .kind = TraceKind::kDeliver,
                .node = NodeId(1),
                .peer = NodeId(0),
                .message_id = 9,
                .local_time = TimeNs(11),
                .payload = &message};
  EXPECT_EQ(TraceRecordToJson(r),
            R"({"i":4,"t":10,"kind":"deliver","node":1,"peer":0,"msg":9,"local":11,"type":"raft.vote",)"
            R"("fields":{"term":2,"granted":1}})");
  TraceRecord note{.kind = TraceKind::kNote, .detail = "say \"hi\"\n"};
  EXPECT_EQ(TraceRecordToJson(note), R"({"i":0,"t":0,"kind":"note","local":0,"detail":"say \"hi\"\u000a"})");
}

}  // namespace
}  // namespace sim
