package main

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Whatever decodeEventFast accepts, json.Unmarshal reads to the same event.
func agreesWithUnmarshal(t *testing.T, line string) bool {
	t.Helper()
	var fast event
	if !decodeEventFast([]byte(line), &fast) {
		if !reflect.DeepEqual(fast, event{}) {
			t.Errorf("%s: refused, but changed the event to %+v", line, fast)
		}
		return false
	}
	var full event
	if err := json.Unmarshal([]byte(line), &full); err != nil {
		t.Errorf("%s: accepted, but json.Unmarshal fails: %v", line, err)
	} else if !reflect.DeepEqual(fast, full) {
		t.Errorf("%s: read as %+v, json.Unmarshal reads %+v", line, fast, full)
	}
	return true
}

func TestDecodeEventFastReadsWhatElectsimWrites(t *testing.T) {
	var ev event
	line := `{"type":"message","from":2,"msg":{"type":"etcd.app","term":7,"log_term":6,"index":12,"commit":-4,` +
		`"ent_term":7,"ent_data":99,"reject":1,"reject_hint":3,"granted":1},"mono":120000000,"wall":-5}`
	if !decodeEventFast([]byte(line), &ev) {
		t.Fatalf("refused %s", line)
	}
	want := event{Type: "message", From: 2, Msg: record{Type: "etcd.app", Term: 7, LogTerm: 6, Index: 12, Commit: -4,
		EntTerm: 7, EntData: 99, Reject: 1, RejectHint: 3, Granted: 1}}
	if !reflect.DeepEqual(ev, want) {
		t.Errorf("read %+v, want %+v", ev, want)
	}
	for _, line := range []string{
		line,
		`{"type":"timer","id":3,"mono":9223372036854775807,"wall":-9223372036854775808}`,
		`{"type":"message","from":0,"msg":{"type":"etcd.vote_resp","term":2,"granted":0},"mono":0,"wall":0}`,
	} {
		if !agreesWithUnmarshal(t, line) {
			t.Errorf("refused %s", line)
		}
	}
}

func TestDecodeEventFastLeavesTheRestToUnmarshal(t *testing.T) {
	for _, line := range []string{
		`{"type":"start","protocol":1,"node":0,"nodes":3,"resource":-1,"seed":1,"options":{},"mono":0,"wall":0}`,
		`{"type":"timer","id":3,"id":4}`,                       // a key twice
		`{"type":"timer","ID":3}`,                              // json.Unmarshal matches keys case-insensitively
		`{"type":"timer","id":3.0}`,                            // a float
		`{"type":"timer","id":9223372036854775808}`,            // out of range
		`{"type":"timer","id":01}`,                             // not JSON
		`{"type":"timer","id":null}`,                           // null
		`{"type":"timer", "id":3}`,                             // whitespace
		`{"type":"tim\u0065r","id":3}`,                         // an escape
		`{"type":"message","msg":{"type":"x","token":1}}`,      // a field the node does not know
		`{"type":"message","msg":{"type":"x","term":{"a":1}}}`, // too deep
		`{"type":"timer","id":3}x`,                             // something after it
		`{"id":3}`,                                             // no type
	} {
		if agreesWithUnmarshal(t, line) {
			t.Errorf("accepted %s", line)
		}
	}
}

// Lines made by mutating events a few bytes at a time.
func TestDecodeEventFastAgreesWithUnmarshalOnMutatedLines(t *testing.T) {
	seeds := []string{
		`{"type":"message","from":2,"msg":{"type":"etcd.app","term":7,"index":12,"commit":4},"mono":1,"wall":2}`,
		`{"type":"timer","id":3,"mono":100,"wall":100}`,
	}
	alphabet := []byte(`{}[]":,-.0123456789eE tnx\`)
	state := uint64(0x9e3779b97f4a7c15)
	next := func() uint64 {
		state ^= state << 13
		state ^= state >> 7
		state ^= state << 17
		return state
	}
	accepted := 0
	for _, seed := range seeds {
		for round := 0; round < 20000; round++ {
			b := []byte(seed)
			for e := 0; e < 1+int(next()%3) && len(b) > 0; e++ {
				at := int(next() % uint64(len(b)))
				c := alphabet[next()%uint64(len(alphabet))]
				switch next() % 3 {
				case 0:
					b[at] = c
				case 1:
					b = append(b[:at], append([]byte{c}, b[at:]...)...)
				default:
					b = append(b[:at], b[at+1:]...)
				}
			}
			if agreesWithUnmarshal(t, string(b)) {
				accepted++
			}
		}
	}
	if accepted < 100 {
		t.Errorf("only %d mutated lines accepted: the test reaches too few", accepted)
	}
}
