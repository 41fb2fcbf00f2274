package changefeed

import (
	"strconv"
	"strings"
)

// message is one message as read: the sender's origin and sequence number (0: a message
// of the release before) and its events.
type message struct {
	origin string
	seq    uint64
	events []Event
}

// batch is one message to send and the number of events it carries.
type batch struct {
	payload string
	events  int
}

// encode packs events into messages of at most maxMessage bytes (or one event), numbered
// from seq on.
func (f *Feed) encode(seq uint64, events []Event) []batch {
	var out []batch
	var b strings.Builder
	n := 0
	begin := func() {
		b.Reset()
		b.WriteString(f.origin)
		b.WriteByte('.')
		b.WriteString(strconv.FormatUint(seq+uint64(len(out)), 10))
	}
	begin()
	for _, e := range events {
		if n > 0 && b.Len()+3+len(e.ID) > maxMessage {
			out = append(out, batch{b.String(), n})
			n = 0
			begin()
		}
		b.WriteByte(' ')
		b.WriteByte(byte(e.Kind))
		b.WriteByte(':')
		b.WriteString(e.ID)
		n++
	}
	return append(out, batch{b.String(), n})
}

// decode reads a message; ok is false for one this release cannot read.
func decode(s string) (m message, ok bool) {
	head, rest, _ := strings.Cut(s, " ")
	origin, seqText, sequenced := strings.Cut(head, ".")
	if origin == "" {
		return message{}, false
	}
	if !sequenced {
		// The release before: "<origin> <kind>:<id>".
		if len(rest) < 3 || rest[1] != ':' {
			return message{}, false
		}
		return message{origin: origin, events: []Event{{Kind(rest[0]), rest[2:]}}}, true
	}
	seq, err := strconv.ParseUint(seqText, 10, 64)
	if err != nil || seq == 0 {
		return message{}, false
	}
	m = message{origin: origin, seq: seq}
	if rest == "" {
		return m, true
	}
	for tok := range strings.SplitSeq(rest, " ") {
		if len(tok) < 2 || tok[1] != ':' {
			return message{}, false
		}
		m.events = append(m.events, Event{Kind(tok[0]), tok[2:]})
	}
	return m, true
}
