package note

import "sync"

// edits serialises the updates of one note's content within this process: each renders
// from what the one before it stored, so that concurrent PATCHes of a note do not make
// each other render again and give up (ErrBusy). It holds no database lock: other notes,
// and the updates of this note that render nothing, go on meanwhile. Across processes
// the etag check at the commit and one more render still hold (Publisher.Update).
type edits struct {
	mu    sync.Mutex
	notes map[string]*edit
}

// edit is one note's turn: its lock and how many updates hold or wait for it.
type edit struct {
	sync.Mutex
	waiting int
}

// lock waits for the note cuid's turn and returns its release.
func (e *edits) lock(cuid string) (unlock func()) {
	e.mu.Lock()
	if e.notes == nil {
		e.notes = map[string]*edit{}
	}
	ed := e.notes[cuid]
	if ed == nil {
		ed = &edit{}
		e.notes[cuid] = ed
	}
	ed.waiting++
	e.mu.Unlock()
	ed.Lock()
	return func() {
		ed.Unlock()
		e.mu.Lock()
		if ed.waiting--; ed.waiting == 0 {
			delete(e.notes, cuid)
		}
		e.mu.Unlock()
	}
}
