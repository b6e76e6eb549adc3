package main

// A reader for the two events nearly every step is made of, `message` and
// `timer`, as electsim writes them: one object, no whitespace, integers,
// strings without escapes, and the message's record one level down. Read
// through encoding/json (reflection, a map lookup per member) they were
// about a tenth of an etcd-raft campaign's CPU time. decodeEventFast
// accepts only lines json.Unmarshal would read to the same event, and
// leaves every other line (start, anything unusual, anything wrong) to it.

import "math"

// decodeEventFast fills ev from line and reports true, or reports false
// having left ev as it was.
func decodeEventFast(line []byte, ev *event) bool {
	p := plainReader{b: line}
	var out event
	var seen uint8
	var skipped int64 // mono and wall: not read by the node; encoding/json skips them
	ok := p.object(func(key []byte) bool {
		// Each member once: encoding/json would keep the last of two.
		var bit uint8
		var field *int64
		switch string(key) {
		case "type":
			bit = 1
		case "from":
			bit, field = 2, &out.From
		case "id":
			bit, field = 4, &out.ID
		case "mono":
			bit, field = 8, &skipped
		case "wall":
			bit, field = 16, &skipped
		case "msg":
			bit = 32
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		switch {
		case field != nil:
			return p.integer(field)
		case bit == 32:
			return p.record(&out.Msg)
		}
		s, ok := p.rawString()
		switch {
		case ok && string(s) == "message":
			out.Type = "message"
		case ok && string(s) == "timer":
			out.Type = "timer"
		default:
			return false
		}
		return true
	})
	if !ok || seen&1 == 0 || p.i != len(p.b) {
		return false
	}
	*ev = out
	return true
}

type plainReader struct {
	b []byte
	i int
}

// object reads `{"key":value,...}`, handing each key to member, which reads
// the value; a key twice or any other shape is false.
func (p *plainReader) object(member func(key []byte) bool) bool {
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return false
	}
	p.i++
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return true
	}
	for {
		key, ok := p.rawString()
		if !ok || p.i >= len(p.b) || p.b[p.i] != ':' {
			return false
		}
		p.i++
		if !member(key) || p.i >= len(p.b) {
			return false
		}
		c := p.b[p.i]
		p.i++
		if c == '}' {
			return true
		}
		if c != ',' {
			return false
		}
	}
}

// rawString reads a string with no escape and only printable ASCII in it.
func (p *plainReader) rawString() ([]byte, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		c := p.b[j]
		if c == '"' {
			p.i = j + 1
			return p.b[start:j], true
		}
		if c == '\\' || c < 0x20 || c > 0x7e {
			return nil, false
		}
	}
	return nil, false
}

// recordTypes holds one copy of each record type name seen, so that a
// message does not allocate its type's name again.
var recordTypes = map[string]string{}

func (p *plainReader) recordType() (string, bool) {
	b, ok := p.rawString()
	if !ok {
		return "", false
	}
	if s, known := recordTypes[string(b)]; known {
		return s, true
	}
	s := string(b)
	recordTypes[s] = s
	return s, true
}

// integer reads an int64 in JSON's integer syntax; a fraction, an exponent,
// a leading zero or a value out of range is false.
func (p *plainReader) integer(out *int64) bool {
	neg := p.i < len(p.b) && p.b[p.i] == '-'
	if neg {
		p.i++
	}
	start := p.i
	var v int64 // accumulated negative, so that math.MinInt64 fits
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		d := int64(p.b[p.i] - '0')
		if v < (math.MinInt64+d)/10 {
			return false
		}
		v = v*10 - d
		p.i++
	}
	n := p.i - start
	if n == 0 || (n > 1 && p.b[start] == '0') {
		return false
	}
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return false
	}
	if !neg {
		if v == math.MinInt64 {
			return false
		}
		v = -v
	}
	*out = v
	return true
}

// record reads a message record: its type and the integer fields the node
// knows, each once; any other member is false.
func (p *plainReader) record(r *record) bool {
	var seen uint16
	return p.object(func(key []byte) bool {
		var bit uint16
		var field *int64
		switch string(key) {
		case "type":
			s, ok := p.recordType()
			if !ok || seen&1 != 0 {
				return false
			}
			seen |= 1
			r.Type = s
			return true
		case "term":
			bit, field = 2, &r.Term
		case "log_term":
			bit, field = 4, &r.LogTerm
		case "index":
			bit, field = 8, &r.Index
		case "commit":
			bit, field = 16, &r.Commit
		case "ent_term":
			bit, field = 32, &r.EntTerm
		case "ent_data":
			bit, field = 64, &r.EntData
		case "reject":
			bit, field = 128, &r.Reject
		case "reject_hint":
			bit, field = 256, &r.RejectHint
		case "granted":
			bit, field = 512, &r.Granted
		default:
			return false
		}
		if seen&bit != 0 || !p.integer(field) {
			return false
		}
		seen |= bit
		return true
	})
}
