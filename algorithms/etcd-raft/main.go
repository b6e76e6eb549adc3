// An election node that speaks electsim's step protocol (docs/step-protocol.md)
// and runs etcd's raft library (go.etcd.io/etcd/raft, 3.4 API) inside: one
// RawNode per process, one process per boot. It reports what electsim's own
// Raft reports (algorithms/raft/raft.cc), at the same moments, so that the
// checkers judge both alike.
//
// Everything the node does follows from the events: time comes only from
// timers, randomness only from the start event's seed, and every line it
// writes is built by hand in a fixed member order.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"go.etcd.io/etcd/raft"
	pb "go.etcd.io/etcd/raft/raftpb"
)

// etcd draws its randomized election timeouts from a package-level source
// seeded from the wall clock. The node reseeds it from the boot's seed; this
// struct must keep the layout of raft.lockedRand (raft.go).
type lockedRand struct {
	mu   sync.Mutex
	rand *rand.Rand
}

// Declared as an untyped pointer: with its own pointer type, the linker
// looks for that type's debug information under etcd's symbol and fails.
//
//go:linkname etcdGlobalRand go.etcd.io/etcd/raft.globalRand
var etcdGlobalRand unsafe.Pointer

// seedEtcd makes etcd's timeouts this boot's: called before the node exists,
// as newRaft draws the first one.
//
// With spreadTicks 0 or more, the draws land in [0, spreadTicks] instead of
// etcd's [0, ElectionTick): etcd's only use of the source is
// electionTimeout + Intn(electionTimeout) (raft.go, resetRandomizedElectionTimeout),
// and Intn(n) returns Int63()>>32 % n, so a source that returns k<<32 for k
// below n makes it return k. That is how the node runs timeout ranges etcd
// cannot be configured with (the Raft paper's 150-151ms), for comparisons.
func seedEtcd(seed uint64, spreadTicks int64) {
	var source rand.Source = rand.NewSource(int64(seed))
	if spreadTicks >= 0 {
		source = &spreadSource{draws: rand.New(source), choices: spreadTicks + 1}
	}
	r := (*lockedRand)(etcdGlobalRand)
	r.mu.Lock()
	r.rand = rand.New(source)
	r.mu.Unlock()
}

// spreadSource yields k<<32 for k uniform in [0, choices).
type spreadSource struct {
	draws   *rand.Rand
	choices int64
}

func (s *spreadSource) Int63() int64 { return s.draws.Int63n(s.choices) << 32 }
func (s *spreadSource) Seed(int64)   {}

// Mixed into the seed for the tick phase's own stream.
const tickPhaseStream = 0x9e3779b97f4a7c15

// Timer ids.
const (
	timerTick     = 1
	timerWorkTick = 2
	timerWorkSend = 3
)

// Defaults of the options, in ns.
const (
	defaultTickInterval      = 10_000_000
	defaultElectionTimeout   = 150_000_000
	defaultHeartbeatInterval = 50_000_000
)

// Stable storage keys.
const (
	keyBoots    = "boots"
	keyTerm     = "hs.term"
	keyVote     = "hs.vote"
	keyCommit   = "hs.commit"
	keyLogLast  = "log.last"
	bootstrapAt = 1 // the index (and term) of the bootstrap snapshot
)

// A message or observation record as it arrives: the union of the fields of
// every record type this node reads (their names do not clash).
type record struct {
	Type       string `json:"type"`
	Term       int64  `json:"term"`
	LogTerm    int64  `json:"log_term"`
	Index      int64  `json:"index"`
	Commit     int64  `json:"commit"`
	EntTerm    int64  `json:"ent_term"`
	EntData    int64  `json:"ent_data"`
	Reject     int64  `json:"reject"`
	RejectHint int64  `json:"reject_hint"`
	Granted    int64  `json:"granted"`
}

type options struct {
	TickInterval       *int64 `json:"tick_interval"`
	ElectionTimeout    *int64 `json:"election_timeout"`
	ElectionTimeoutMax *int64 `json:"election_timeout_max"`
	HeartbeatInterval  *int64 `json:"heartbeat_interval"`
	PreVote            *bool  `json:"pre_vote"`
	CheckQuorum        *bool  `json:"check_quorum"`
}

type leaderWork struct {
	WriteInterval int64 `json:"write_interval"`
	WriteDuration int64 `json:"write_duration"`
}

type event struct {
	Type       string     `json:"type"`
	Node       int64      `json:"node"`
	Nodes      int64      `json:"nodes"`
	Resource   int64      `json:"resource"`
	Seed       uint64     `json:"seed"`
	Options    options    `json:"options"`
	LeaderWork leaderWork `json:"leader_work"`
	From       int64      `json:"from"`
	Msg        record     `json:"msg"`
	ID         int64      `json:"id"`
}

type loadAnswer struct {
	Type  string `json:"type"`
	Key   string `json:"key"`
	Value *int64 `json:"value"`
}

// protocolError ends the process: the peer on the other end broke the
// protocol, so no answer could be trusted.
type protocolError struct{ msg string }

// nodeError is reported as an `error` effect: the node cannot go on.
type nodeError struct{ msg string }

// ---- input and output ----

type conn struct {
	r    *bufio.Reader
	w    *bufio.Writer
	line []byte // the line being built
	in   []byte // a line longer than the reader's buffer, assembled
}

// readLine returns the next non-empty line without its newline, or io.EOF.
// The slice is valid until the next call.
func (c *conn) readLine() ([]byte, error) {
	for {
		b, err := c.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			c.in = append(c.in[:0], b...)
			for err == bufio.ErrBufferFull {
				b, err = c.r.ReadSlice('\n')
				c.in = append(c.in, b...)
			}
			b = c.in
		}
		if err != nil && (err != io.EOF || len(b) == 0) {
			return nil, err
		}
		for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
			b = b[:len(b)-1]
		}
		if len(b) > 0 {
			return b, nil
		}
		if err == io.EOF {
			return nil, io.EOF
		}
	}
}

func (c *conn) begin(typ string) {
	c.line = append(c.line[:0], `{"type":"`...)
	c.line = append(c.line, typ...)
	c.line = append(c.line, '"')
}

func (c *conn) field(name string, v int64) {
	c.line = append(c.line, ',', '"')
	c.line = append(c.line, name...)
	c.line = append(c.line, '"', ':')
	c.line = strconv.AppendInt(c.line, v, 10)
}

func (c *conn) strField(name, v string) {
	c.line = append(c.line, ',', '"')
	c.line = append(c.line, name...)
	c.line = append(c.line, '"', ':')
	c.line = appendJSONString(c.line, v)
}

// openRecord starts a nested record member: `,"name":{"type":"typ"`.
func (c *conn) openRecord(name, typ string) {
	c.line = append(c.line, ',', '"')
	c.line = append(c.line, name...)
	c.line = append(c.line, `":{"type":"`...)
	c.line = append(c.line, typ...)
	c.line = append(c.line, '"')
}

func (c *conn) closeRecord() { c.line = append(c.line, '}') }

func (c *conn) end() {
	c.line = append(c.line, '}', '\n')
	c.w.Write(c.line)
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // cannot fail for a string
	return append(b, q...)
}

func (c *conn) done() {
	c.w.WriteString("{\"type\":\"done\"}\n")
	c.w.Flush()
}

// ---- the node ----

type node struct {
	c *conn

	self, nodes, resource int64
	boot                  int64
	tickNs                int64
	work                  leaderWork

	rn    *raft.RawNode
	store *raft.MemoryStorage

	// What stable storage holds (or has buffered).
	saved pb.HardState

	// What the checkers were last told.
	term        uint64
	vote        uint64
	state       raft.StateType
	lead        uint64
	roleShown   int64 // 0 follower, 1 candidate, 2 leader
	roleTerm    uint64
	beliefShown int64 // -1: nobody
	beliefTerm  uint64

	// Leader work (algorithms/leader_work.cc).
	workActive bool
	token      int64
	preparing  bool // write_begin observed, the write not yet sent
	seq        int64
	created    int64 // entries created in this boot
}

type noopLogger struct{}

func (noopLogger) Debug(v ...interface{})                   {}
func (noopLogger) Debugf(format string, v ...interface{})   {}
func (noopLogger) Error(v ...interface{})                   {}
func (noopLogger) Errorf(format string, v ...interface{})   {}
func (noopLogger) Info(v ...interface{})                    {}
func (noopLogger) Infof(format string, v ...interface{})    {}
func (noopLogger) Warning(v ...interface{})                 {}
func (noopLogger) Warningf(format string, v ...interface{}) {}

// etcd calls these on broken invariants; the panic becomes an `error` effect.
func (noopLogger) Fatal(v ...interface{}) { panic(nodeError{fmt.Sprint(v...)}) }
func (noopLogger) Fatalf(format string, v ...interface{}) {
	panic(nodeError{fmt.Sprintf(format, v...)})
}
func (noopLogger) Panic(v ...interface{}) { panic(nodeError{fmt.Sprint(v...)}) }
func (noopLogger) Panicf(format string, v ...interface{}) {
	panic(nodeError{fmt.Sprintf(format, v...)})
}

func fail(format string, args ...interface{}) {
	panic(nodeError{fmt.Sprintf(format, args...)})
}

// ---- effects ----

func (n *node) load(key string) (int64, bool) {
	c := n.c
	c.begin("load")
	c.strField("key", key)
	c.end()
	c.w.Flush() // electsim answers before it reads on
	line, err := c.readLine()
	if err != nil {
		panic(protocolError{fmt.Sprintf("reading the value of %q: %v", key, err)})
	}
	var a loadAnswer
	if err := json.Unmarshal(line, &a); err != nil || a.Type != "value" || a.Key != key {
		panic(protocolError{fmt.Sprintf("expected the value of %q, got %s", key, line)})
	}
	if a.Value == nil {
		return 0, false
	}
	return *a.Value, true
}

func (n *node) store1(effect, key string, v int64) {
	n.c.begin(effect)
	n.c.strField("key", key)
	n.c.field("value", v)
	n.c.end()
}

func (n *node) setTimer(id, delay int64) {
	n.c.begin("set_timer")
	n.c.field("id", id)
	n.c.field("delay", delay)
	n.c.end()
}

func (n *node) cancelTimer(id int64) {
	n.c.begin("cancel_timer")
	n.c.field("id", id)
	n.c.end()
}

// A field of an observation.
type kv struct {
	name  string
	value int64
}

// observe writes an observation with its fields in the order given.
func (n *node) observe(typ string, fields ...kv) {
	c := n.c
	c.begin("observe")
	c.openRecord("obs", typ)
	for _, f := range fields {
		c.field(f.name, f.value)
	}
	c.closeRecord()
	c.end()
}

func entryKey(i uint64, field string) string {
	return "log." + strconv.FormatUint(i, 10) + "." + field
}

// Entry data on the wire and in storage is the entry id, 8 bytes big-endian;
// an empty entry (a new leader's) is id 0.
func entryID(data []byte) int64 {
	switch len(data) {
	case 0:
		return 0
	case 8:
		return int64(binary.BigEndian.Uint64(data))
	}
	fail("an entry's data is %d bytes, not an 8-byte entry id", len(data))
	return 0
}

func entryData(id int64) []byte {
	if id == 0 {
		return nil
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(id))
	return b[:]
}

// ---- events ----

func (n *node) start(ev *event) {
	opt := ev.Options
	tick := int64(defaultTickInterval)
	if opt.TickInterval != nil {
		tick = *opt.TickInterval
	}
	election := int64(defaultElectionTimeout)
	if opt.ElectionTimeout != nil {
		election = *opt.ElectionTimeout
	}
	heartbeat := int64(defaultHeartbeatInterval)
	if opt.HeartbeatInterval != nil {
		heartbeat = *opt.HeartbeatInterval
	}
	if tick <= 0 {
		fail("option tick_interval (%dns) must be positive", tick)
	}
	// etcd counts both in ticks: a remainder would silently change them.
	var bad []string
	if election%tick != 0 {
		bad = append(bad, fmt.Sprintf("election_timeout (%dns)", election))
	}
	if heartbeat%tick != 0 {
		bad = append(bad, fmt.Sprintf("heartbeat_interval (%dns)", heartbeat))
	}
	// election_timeout_max: 0 keeps etcd's own range.
	spreadTicks := int64(-1)
	if opt.ElectionTimeoutMax != nil && *opt.ElectionTimeoutMax != 0 {
		max := *opt.ElectionTimeoutMax
		if max%tick != 0 {
			bad = append(bad, fmt.Sprintf("election_timeout_max (%dns)", max))
		}
		if max < election || max >= 2*election {
			fail("option election_timeout_max (%dns) must be 0 (etcd's own range) or in [election_timeout, 2*election_timeout) (election_timeout %dns)", max, election)
		}
		spreadTicks = (max - election) / tick
	}
	switch len(bad) {
	case 1:
		fail("option %s must be a multiple of tick_interval (%dns)", bad[0], tick)
	case 2, 3:
		fail("options %s must be multiples of tick_interval (%dns)", strings.Join(bad, " and "), tick)
	}
	if ev.Nodes < 1 || ev.Node < 0 || ev.Node >= ev.Nodes {
		fail("node %d is not one of 0..%d", ev.Node, ev.Nodes-1)
	}
	n.self, n.nodes, n.resource = ev.Node, ev.Nodes, ev.Resource
	n.tickNs = tick
	n.work = ev.LeaderWork

	// The boot counter only keeps entry ids unique: durable at once.
	boots, _ := n.load(keyBoots)
	n.boot = boots + 1
	n.store1("persist", keyBoots, n.boot)

	term, hasTerm := n.load(keyTerm)
	vote, _ := n.load(keyVote)
	commit, _ := n.load(keyCommit)
	last, hasLast := n.load(keyLogLast)
	if !hasLast {
		last = bootstrapAt
	}
	if last < bootstrapAt {
		fail("stable storage holds log.last %d, below the bootstrap snapshot's index", last)
	}
	var ents []pb.Entry
	for i := uint64(bootstrapAt + 1); i <= uint64(last); i++ {
		t, _ := n.load(entryKey(i, "term"))
		d, _ := n.load(entryKey(i, "data"))
		ents = append(ents, pb.Entry{Term: uint64(t), Index: i, Type: pb.EntryNormal, Data: entryData(d)})
	}
	n.saved = pb.HardState{Term: uint64(term), Vote: uint64(vote), Commit: uint64(commit)}

	n.store = raft.NewMemoryStorage()
	voters := make([]uint64, n.nodes)
	for i := range voters {
		voters[i] = uint64(i + 1)
	}
	if err := n.store.ApplySnapshot(pb.Snapshot{Metadata: pb.SnapshotMetadata{
		Index: bootstrapAt, Term: bootstrapAt, ConfState: pb.ConfState{Voters: voters}}}); err != nil {
		fail("bootstrap snapshot: %v", err)
	}
	if len(ents) > 0 {
		if err := n.store.Append(ents); err != nil {
			fail("recovering the log: %v", err)
		}
	}
	if hasTerm {
		if err := n.store.SetHardState(n.saved); err != nil {
			fail("recovering the hard state: %v", err)
		}
	}

	seedEtcd(ev.Seed, spreadTicks)

	rn, err := raft.NewRawNode(&raft.Config{
		ID:                        uint64(n.self + 1),
		ElectionTick:              int(election / tick),
		HeartbeatTick:             int(heartbeat / tick),
		Storage:                   n.store,
		MaxSizePerMsg:             1, // one entry per MsgApp: records are flat
		MaxCommittedSizePerReady:  1 << 62,
		MaxInflightMsgs:           256,
		PreVote:                   opt.PreVote != nil && *opt.PreVote,
		CheckQuorum:               opt.CheckQuorum != nil && *opt.CheckQuorum,
		DisableProposalForwarding: true,
		Logger:                    noopLogger{},
	})
	if err != nil {
		fail("etcd raft refused its configuration: %v", err)
	}
	n.rn = rn

	n.observe("log.append", kv{"index", bootstrapAt}, kv{"term", bootstrapAt}, kv{"entry", 0})
	n.observe("log.commit", kv{"index", bootstrapAt}, kv{"term", bootstrapAt}, kv{"entry", 0},
		kv{"current_term", term})
	for _, e := range ents {
		n.observe("log.append", kv{"index", int64(e.Index)}, kv{"term", int64(e.Term)},
			kv{"entry", entryID(e.Data)})
	}
	n.term, n.vote = uint64(term), uint64(vote)
	if term > 0 {
		n.observe("term", kv{"term", term})
	}
	n.state, n.lead = raft.StateFollower, raft.None
	n.roleShown, n.roleTerm = 0, n.term
	n.beliefShown, n.beliefTerm = -1, n.term
	n.observe("role", kv{"role", 0}, kv{"term", term})
	n.observe("believe", kv{"leader", -1}, kv{"term", term})
	// etcd counts whole ticks since the leader's last message: a gap just
	// under election_timeout can span ElectionTick ticks and end the lease,
	// so the promise holds for gaps one tick shorter. A pre-vote round lasts
	// up to the longest randomized timeout (2E), and a reply from the round
	// before may still count: 4E.
	n.observe("declare.hearing", kv{"within", election - tick}, kv{"over", 4 * election})

	// The first tick comes at a point of the tick period drawn from the seed
	// (from a stream of its own, so etcd's draws stay as they are): processes
	// started together would otherwise tick in phase, and followers would time
	// out in the same instant far more often than a real cluster's, whose
	// nodes start at different times.
	phase := 1 + rand.New(rand.NewSource(int64(ev.Seed^tickPhaseStream))).Int63n(tick)
	n.setTimer(timerTick, phase)
	n.drain() // a restarted node hands out the entries its commit covers
}

func (n *node) onTimer(id int64) {
	switch id {
	case timerTick:
		n.setTimer(timerTick, n.tickNs)
		n.rn.Tick()
	case timerWorkTick:
		if !n.workActive {
			return
		}
		n.setTimer(timerWorkTick, n.work.WriteInterval)
		if !n.preparing && n.state == raft.StateLeader {
			n.observe("write_begin", kv{"token", n.token})
			n.setTimer(timerWorkSend, n.work.WriteDuration)
			n.preparing = true
		}
		return
	case timerWorkSend:
		if !n.workActive || !n.preparing {
			return
		}
		// No re-check: the decision was made at write_begin (leader_work.cc).
		n.preparing = false
		n.seq++
		c := n.c
		c.begin("send")
		c.field("to", n.resource)
		c.openRecord("msg", "resource.write")
		c.field("token", n.token)
		c.field("seq", n.seq)
		c.closeRecord()
		c.end()
		n.observe("write", kv{"token", n.token}, kv{"seq", n.seq})
		// Creator, incarnation, count, as electsim's Raft names its entries.
		n.created++
		if n.self >= 1<<20 || n.boot >= 1<<16 || n.created >= 1<<28 {
			fail("an entry id has room for 2^20 nodes, 2^16 boots and 2^28 entries per boot")
		}
		id := n.self<<44 | n.boot<<28 | n.created
		// A dropped proposal (no longer leader) is a write that never got logged.
		_ = n.rn.Propose(entryData(id))
	default:
		return
	}
	n.drain()
}

func (n *node) onMessage(from int64, m *record) {
	// Only peers speak Raft; the resource's acks are ignored as electsim's
	// Raft ignores them.
	if from < 0 || from >= n.nodes || from == n.self {
		return
	}
	msg := pb.Message{
		From:    uint64(from + 1),
		To:      uint64(n.self + 1),
		Term:    uint64(m.Term),
		LogTerm: uint64(m.LogTerm),
		Index:   uint64(m.Index),
		Commit:  uint64(m.Commit),
	}
	switch m.Type {
	case "etcd.app":
		msg.Type = pb.MsgApp
		if m.EntTerm != 0 {
			msg.Entries = []pb.Entry{{Term: uint64(m.EntTerm), Index: uint64(m.Index) + 1,
				Type: pb.EntryNormal, Data: entryData(m.EntData)}}
		}
	case "etcd.app_resp":
		msg.Type = pb.MsgAppResp
		msg.Reject = m.Reject != 0
		msg.RejectHint = uint64(m.RejectHint)
	case "etcd.vote":
		msg.Type = pb.MsgVote
	case "etcd.vote_resp":
		msg.Type = pb.MsgVoteResp
		msg.Reject = m.Granted == 0
	case "etcd.pre_vote":
		msg.Type = pb.MsgPreVote
	case "etcd.pre_vote_resp":
		msg.Type = pb.MsgPreVoteResp
		msg.Reject = m.Granted == 0
	case "etcd.heartbeat":
		msg.Type = pb.MsgHeartbeat
	case "etcd.heartbeat_resp":
		msg.Type = pb.MsgHeartbeatResp
	default:
		return // resource.ack, or nothing this node speaks
	}
	// Errors here are etcd refusing a message it should not get (a local
	// type, an unknown peer): dropped, as a network would.
	_ = n.rn.Step(msg)
	n.drain()
}

// drain handles every Ready: storage first (etcd requires the hard state and
// entries durable before any message leaves), then what the checkers see,
// then the messages, then what got committed.
func (n *node) drain() {
	for n.rn.HasReady() {
		rd := n.rn.Ready()
		if !raft.IsEmptySnap(rd.Snapshot) {
			fail("etcd raft handed over a snapshot, which this node never sends")
		}
		wrote := false
		hasHS := !raft.IsEmptyHardState(rd.HardState)
		if hasHS {
			hs := rd.HardState
			if hs.Term != n.saved.Term {
				n.store1("write", keyTerm, int64(hs.Term))
				wrote = true
			}
			if hs.Vote != n.saved.Vote {
				n.store1("write", keyVote, int64(hs.Vote))
				wrote = true
			}
			if hs.Commit != n.saved.Commit {
				n.store1("write", keyCommit, int64(hs.Commit))
				wrote = true
			}
			n.saved = hs
		}
		for i := range rd.Entries {
			e := &rd.Entries[i]
			if e.Type != pb.EntryNormal {
				fail("etcd raft appended an entry of type %s at index %d", e.Type, e.Index)
			}
			n.store1("write", entryKey(e.Index, "term"), int64(e.Term))
			n.store1("write", entryKey(e.Index, "data"), entryID(e.Data))
		}
		if len(rd.Entries) > 0 {
			// An append may replace a suffix: the log now ends here.
			n.store1("write", keyLogLast, int64(rd.Entries[len(rd.Entries)-1].Index))
			wrote = true
			if err := n.store.Append(rd.Entries); err != nil {
				fail("appending to storage: %v", err)
			}
		}
		if hasHS {
			n.store.SetHardState(rd.HardState)
		}
		if wrote {
			n.c.begin("sync")
			n.c.end()
		}

		// Observations: term, vote, role and belief, appended entries.
		termChanged := false
		if hasHS {
			hs := rd.HardState
			if hs.Term > n.term {
				n.term = hs.Term
				termChanged = true
				n.observe("term", kv{"term", int64(hs.Term)})
			}
			if hs.Vote != raft.None && (hs.Vote != n.vote || termChanged) {
				n.observe("vote", kv{"term", int64(hs.Term)}, kv{"candidate", int64(hs.Vote) - 1})
			}
			n.vote = hs.Vote
		}
		if rd.SoftState != nil {
			n.state, n.lead = rd.SoftState.RaftState, rd.SoftState.Lead
		}
		n.report()
		for i := range rd.Entries {
			e := &rd.Entries[i]
			n.observe("log.append", kv{"index", int64(e.Index)}, kv{"term", int64(e.Term)},
				kv{"entry", entryID(e.Data)})
		}

		for i := range rd.Messages {
			n.send(&rd.Messages[i])
		}

		for i := range rd.CommittedEntries {
			e := &rd.CommittedEntries[i]
			n.observe("log.commit", kv{"index", int64(e.Index)}, kv{"term", int64(e.Term)},
				kv{"entry", entryID(e.Data)}, kv{"current_term", int64(n.term)})
		}
		n.rn.Advance(rd)
	}
}

// report tells the checkers the role and belief, each once per change, as
// electsim's LeadershipReport does: a candidate again for each new term it
// campaigns in, a belief again in each new term.
func (n *node) report() {
	if n.state == raft.StateLeader {
		if n.roleShown != 2 || n.roleTerm != n.term {
			n.roleShown, n.roleTerm = 2, n.term
			// Raft's fencing token is its term.
			n.observe("role", kv{"role", 2}, kv{"term", int64(n.term)}, kv{"token", int64(n.term)})
			n.believe(int64(n.self))
			n.beginWork(int64(n.term))
		}
		return
	}
	if n.roleShown == 2 {
		n.endWork()
	}
	role := int64(0)
	if n.state == raft.StateCandidate || n.state == raft.StatePreCandidate {
		role = 1
	}
	if role != n.roleShown || (role == 1 && n.term != n.roleTerm) {
		n.roleShown, n.roleTerm = role, n.term
		n.observe("role", kv{"role", role}, kv{"term", int64(n.term)})
	}
	leader := int64(-1)
	if n.lead != raft.None {
		leader = int64(n.lead) - 1
	}
	n.believe(leader)
}

func (n *node) believe(leader int64) {
	if leader == n.beliefShown && n.term == n.beliefTerm {
		return
	}
	n.beliefShown, n.beliefTerm = leader, n.term
	n.observe("believe", kv{"leader", leader}, kv{"term", int64(n.term)})
}

func (n *node) beginWork(token int64) {
	n.endWork()
	n.workActive = true
	n.token = token
	// The first write goes out at once: a new leader proves itself immediately.
	n.setTimer(timerWorkTick, 0)
}

func (n *node) endWork() {
	if !n.workActive {
		return
	}
	n.workActive = false
	n.preparing = false
	n.cancelTimer(timerWorkTick)
	n.cancelTimer(timerWorkSend)
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (n *node) send(m *pb.Message) {
	c := n.c
	c.begin("send")
	c.field("to", int64(m.To)-1)
	switch m.Type {
	case pb.MsgApp:
		if len(m.Entries) > 1 {
			fail("a MsgApp carries %d entries; a record holds one", len(m.Entries))
		}
		entTerm, entData := int64(0), int64(0)
		if len(m.Entries) == 1 {
			e := &m.Entries[0]
			if e.Type != pb.EntryNormal {
				fail("a MsgApp carries an entry of type %s", e.Type)
			}
			entTerm, entData = int64(e.Term), entryID(e.Data)
		}
		c.openRecord("msg", "etcd.app")
		c.field("term", int64(m.Term))
		c.field("log_term", int64(m.LogTerm))
		c.field("index", int64(m.Index))
		c.field("commit", int64(m.Commit))
		c.field("ent_term", entTerm)
		c.field("ent_data", entData)
	case pb.MsgAppResp:
		c.openRecord("msg", "etcd.app_resp")
		c.field("term", int64(m.Term))
		c.field("index", int64(m.Index))
		c.field("reject", boolInt(m.Reject))
		c.field("reject_hint", int64(m.RejectHint))
	case pb.MsgVote, pb.MsgPreVote:
		if m.Type == pb.MsgVote {
			c.openRecord("msg", "etcd.vote")
		} else {
			c.openRecord("msg", "etcd.pre_vote")
		}
		c.field("term", int64(m.Term))
		c.field("log_term", int64(m.LogTerm))
		c.field("index", int64(m.Index))
	case pb.MsgVoteResp, pb.MsgPreVoteResp:
		if m.Type == pb.MsgVoteResp {
			c.openRecord("msg", "etcd.vote_resp")
		} else {
			c.openRecord("msg", "etcd.pre_vote_resp")
		}
		c.field("term", int64(m.Term))
		c.field("granted", boolInt(!m.Reject))
	case pb.MsgHeartbeat:
		c.openRecord("msg", "etcd.heartbeat")
		c.field("term", int64(m.Term))
		c.field("commit", int64(m.Commit))
	case pb.MsgHeartbeatResp:
		c.openRecord("msg", "etcd.heartbeat_resp")
		c.field("term", int64(m.Term))
	default:
		fail("etcd raft sent a %s, which has no record type here", m.Type)
	}
	c.closeRecord()
	c.end()
}

// ---- main loop ----

func (c *conn) writeError(msg string) {
	c.begin("error")
	c.strField("message", msg)
	c.end()
}

// handle answers one event; a broken invariant becomes an `error` effect and
// the node answers nothing more after it.
func handle(c *conn, n **node, failed *bool, ev *event) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(nodeError)
			if !ok {
				if pe, isProto := r.(protocolError); isProto {
					panic(pe)
				}
				e = nodeError{fmt.Sprint("etcd raft: ", r)}
			}
			c.writeError(e.msg)
			*failed = true
		}
	}()
	if *failed {
		return
	}
	switch ev.Type {
	case "start":
		if *n != nil {
			fail("a second start in one process (one process per boot)")
		}
		nd := &node{c: c}
		*n = nd
		nd.start(ev)
	case "message":
		if *n == nil {
			fail("a message before start")
		}
		(*n).onMessage(ev.From, &ev.Msg)
	case "timer":
		if *n == nil {
			fail("a timer before start")
		}
		(*n).onTimer(ev.ID)
	}
}

// rawStdin reads standard input with a raw system call. The node is one
// goroutine that spends most of its life waiting for the next event; through
// os.Stdin each wait is a blocking syscall the scheduler hands its processor
// off around, which cost more (futex wakeups) than the step itself.
type rawStdin struct{}

func (rawStdin) Read(p []byte) (int, error) {
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, 0, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return 0, errno
		}
		if n == 0 {
			return 0, io.EOF
		}
		return int(n), nil
	}
}

func main() {
	c := &conn{
		r: bufio.NewReaderSize(rawStdin{}, 1<<20),
		w: bufio.NewWriterSize(os.Stdout, 1<<20),
	}
	defer func() {
		if r := recover(); r != nil {
			if pe, ok := r.(protocolError); ok {
				c.w.Flush()
				fmt.Fprintln(os.Stderr, "etcd-raft node:", pe.msg)
				os.Exit(2)
			}
			panic(r)
		}
	}()
	c.w.WriteString("{\"type\":\"hello\",\"protocol\":1}\n")
	c.w.Flush()
	var n *node
	failed := false
	for {
		line, err := c.readLine()
		if err == io.EOF {
			c.w.Flush()
			return
		}
		if err != nil {
			panic(protocolError{fmt.Sprintf("reading an event: %v", err)})
		}
		var ev event
		if decodeEventFast(line, &ev) {
			handle(c, &n, &failed, &ev)
			c.done()
			continue
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			panic(protocolError{fmt.Sprintf("an event that is not JSON: %v: %s", err, line)})
		}
		handle(c, &n, &failed, &ev)
		c.done()
	}
}
