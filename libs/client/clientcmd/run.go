package clientcmd

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/client"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/wire"
)

// run is one publish command: the notes it found and prepared, and what it did with them.
type run struct {
	env    cli.Env
	opts   publishOptions
	finder *finder
	notes  []*prepared
	// unprepared counts the notes that could not be read, failed before anything is sent;
	// fileWarnings the files that were not sent.
	unprepared, fileWarnings int

	// What one session did (withSession may run it twice, after logging in again).
	cl       *client.Client
	mapping  *mapping
	states   map[string]*publishedFile    // this account's, by vault path
	listed   map[string]wire.NoteListItem // the account's publications, by match key of path
	legacy   map[string]*publishedFile    // the old mapping's states, by absolute file path
	all      []wire.NoteListItem
	moves    map[*prepared]string // a note that moved → the path it had
	counts   map[string]int       // outcomes
	failed   int
	warnings map[string]int  // the server's warnings by code, unknown_note_link aside
	unshared map[string]bool // cuids --prune unshared
	unknown  []unknownLink
	drawn    bool
}

// unknownLink is an unknown_note_link warning, counted when still unresolved at the end.
type unknownLink struct {
	from *prepared
	ref  string
}

// fileNotSent is the code under which the summary counts the files a run did not send
// (not found, outside the vault, not converted): warned of by the client, not the server.
const fileNotSent = "file_not_sent"

// prepareAll reads every note found; one that cannot be read fails, alone.
func (r *run) prepareAll() {
	for _, w := range r.finder.warnings {
		r.warnf("%s", w)
		r.fileWarnings++
	}
	for _, n := range r.finder.notes {
		p, err := prepare(n)
		if err != nil {
			fmt.Fprintf(r.env.Stderr, "failed: %s: %v\n", n.path, err)
			r.unprepared++
			continue
		}
		for _, w := range p.warnings {
			r.warnf("%s", w)
			r.fileWarnings++
		}
		r.notes = append(r.notes, p)
	}
}

// reset starts a session's work afresh.
func (r *run) reset(cl *client.Client) {
	r.cl, r.counts, r.failed = cl, map[string]int{}, r.unprepared
	r.warnings, r.unknown, r.moves = map[string]int{}, nil, map[*prepared]string{}
	r.unshared = map[string]bool{}
}

// load reads the mapping of this server and account, and the account's publications.
func (r *run) load(ctx context.Context) error {
	m, err := loadMapping(r.env)
	if err != nil {
		return err
	}
	r.mapping = m
	r.states = m.notes(r.cl.BaseURL, accountOf(r.env, r.cl))
	r.legacy = loadLegacy(r.env, r.cl.BaseURL)
	r.listed, r.all = map[string]wire.NoteListItem{}, nil
	for page, err := range r.cl.Pages(ctx, 100) {
		if err != nil {
			return err
		}
		for _, n := range page.Notes {
			r.all = append(r.all, n)
			if n.Path != nil {
				r.listed[note.MatchKey(*n.Path)] = n
			}
		}
	}
	return nil
}

// accountOf is the user cuid of the client's session, from the token file.
func accountOf(env cli.Env, cl *client.Client) string {
	creds, err := loadCredentials(env.Getenv)
	if err != nil {
		return ""
	}
	if tok := creds.Servers[cl.BaseURL]; tok != nil && tok.Token == cl.Token {
		return tok.UserCuid
	}
	return ""
}

// planMoves finds the notes that moved: a note the account has no publication of, with
// the content of a published note whose file is gone. It is updated in place, its path
// changed, at the same URL.
func (r *run) planMoves() {
	found := map[string]bool{}
	for _, p := range r.notes {
		found[p.path] = true
	}
	gone := map[string]string{} // content hash → path
	for _, path := range sortedPaths(r.states) {
		s := r.states[path]
		if !found[path] && !r.exists(path) {
			gone[s.ContentSHA256] = path
		}
	}
	for _, p := range r.notes {
		if r.states[p.path] != nil || r.opts.fresh {
			continue
		}
		if _, has := r.listed[note.MatchKey(p.path)]; has {
			continue
		}
		if old, ok := gone[hashOf(p.content)]; ok {
			r.moves[p] = old
			delete(gone, hashOf(p.content))
		}
	}
}

// exists reports whether a vault path names a file in any vault of the run.
func (r *run) exists(path string) bool {
	for _, v := range r.finder.vaults {
		if v.index() != nil {
			return true // not known to be gone
		}
		if _, ok := v.paths[note.MatchKey(path)]; ok {
			return true
		}
	}
	return false
}

// previous is the publication a note updates: its state, the state of the note it moved
// from, or the account's publication of its path (listed, its hashes unknown: all is
// sent); nil for a new publication.
func (r *run) previous(p *prepared) (*publishedFile, string) {
	if r.opts.fresh {
		return nil, "published"
	}
	if s := r.states[p.path]; s != nil {
		return s, "updated"
	}
	if old, ok := r.moves[p]; ok {
		return r.states[old], "moved"
	}
	if n, ok := r.listed[note.MatchKey(p.path)]; ok {
		return &publishedFile{Cuid: n.Cuid, URL: n.URL, ETag: n.ETag}, "updated"
	}
	if old := r.legacy[p.file]; old != nil {
		// Published by an older client, by file: its hashes of title and path are unknown,
		// so both are sent.
		return old, "updated"
	}
	return nil, "published"
}

// send publishes or updates one note, reports the outcome, and keeps its state. Only a
// refused session is returned (to log in again); every other failure is the note's.
func (r *run) send(ctx context.Context, p *prepared) error {
	prev, outcome := r.previous(p)
	var state *publishedFile
	var warnings []wire.Warning
	var res any
	var err error
	if prev == nil {
		state, warnings, res, err = r.create(ctx, p)
	} else {
		state, warnings, res, err = r.update(ctx, p, prev)
		if state == prev {
			outcome = "unchanged"
		}
	}
	var apiErr *client.Error
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusUnauthorized {
		return err
	}
	if err != nil {
		if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound && prev != nil {
			delete(r.states, p.path) // unshared elsewhere: the next run publishes it anew
		}
		r.failed++
		r.endProgress()
		fmt.Fprintf(r.env.Stderr, "failed: %s: %v\n", p.path, noteError(err, prev))
		return nil
	}
	if old, moved := r.moves[p]; moved && outcome == "moved" {
		delete(r.states, old)
	}
	r.states[p.path] = state
	r.counts[outcome]++
	r.report(p, outcome, state, warnings, res)
	// Kept after each note, so that a run cut short is not sent again.
	_ = writePrivate(r.env.Getenv, mappingName, r.mapping)
	return nil
}
