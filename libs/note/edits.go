package note

import "sync"

// edits serialises the updates of one note within this process, in two lines: those of
// its content, each rendering from what the one before it stored, and those that render
// nothing. So concurrent PATCHes of a note do not make each other decide again and give
// up (ErrBusy), while an update that renders nothing never waits for a render. It holds
// no database lock: other notes go on meanwhile. Across processes the etag check at the
// commit, and deciding again, still hold (Publisher.Update).
type edits struct {
	mu    sync.Mutex
	notes map[editLine]*edit
}

// editLine is one of a note's two lines of updates.
type editLine struct {
	cuid    string
	content bool
}

// edit is one note's turn: its lock and how many updates hold or wait for it.
type edit struct {
	sync.Mutex
	waiting int
}

// lock waits for the turn of an update of the note cuid, of its content or not, and
// returns its release.
func (e *edits) lock(cuid string, content bool) (unlock func()) {
	line := editLine{cuid, content}
	e.mu.Lock()
	if e.notes == nil {
		e.notes = map[editLine]*edit{}
	}
	ed := e.notes[line]
	if ed == nil {
		ed = &edit{}
		e.notes[line] = ed
	}
	ed.waiting++
	e.mu.Unlock()
	ed.Lock()
	return func() {
		ed.Unlock()
		e.mu.Lock()
		if ed.waiting--; ed.waiting == 0 {
			delete(e.notes, line)
		}
		e.mu.Unlock()
	}
}
