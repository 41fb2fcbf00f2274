package clientcmd

import (
	"bufio"
	"context"
	"errors"
	"net/http"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/client"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/wire"
)

// run is one publish command: the notes it found and prepared, what it plans to do with
// them, and what it did.
type run struct {
	env    cli.Env
	opts   publishOptions
	finder *finder
	notes  []*prepared
	// unprepared counts the notes that could not be read, failed before anything is sent;
	// fileWarnings the files that were not sent.
	unprepared, fileWarnings int
	stdin                    *bufio.Reader // the answers to the run's questions

	// What one session did (withSession may run it twice, after logging in again).
	cl       *client.Client
	mapping  *mapping
	states   map[string]*publishedFile    // this account's, by vault path
	listed   map[string]wire.NoteListItem // the account's publications, by match key of path
	live     map[string]bool              // the cuids of the account's publications
	legacy   map[string]*publishedFile    // the old mapping's states, by absolute file path
	all      []wire.NoteListItem
	moves    map[*prepared]string // a note that moved → the path it had
	steps    []step               // what the run does with each note, in order
	doomed   []doomed             // what --prune unshares
	counts   map[string]int       // outcomes
	failed   int
	warnings map[string]int  // the server's warnings by code, unknown_note_link aside
	unshared map[string]bool // cuids --prune unshared
	unknown  []unknownLink
	drawn    bool
}

// step is what a run does with one note, decided before anything is sent (run.plan), so
// that --dry-run lists what the run does: action is publish, update, unchanged, move or
// overwrite (an update of a publication this vault did not publish), prev the state of the
// publication it updates (nil for a new one).
type step struct {
	p      *prepared
	prev   *publishedFile
	action string
}

// done is the word a run prints for an action done.
var done = map[string]string{"publish": "published", "update": "updated", "unchanged": "unchanged", "move": "moved",
	"overwrite": "overwritten", "unshare": "unshared"}

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
			fprintf(r.env.Stderr, "failed: %s: %v\n", n.path, err)
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

// begin starts a session's work afresh: it reads the mapping and the account's
// publications, and plans the run.
func (r *run) begin(ctx context.Context, cl *client.Client) error {
	r.cl, r.counts, r.failed = cl, map[string]int{}, r.unprepared
	r.warnings, r.unknown, r.moves = map[string]int{}, nil, map[*prepared]string{}
	r.unshared = map[string]bool{}
	if err := r.load(ctx); err != nil {
		return err
	}
	return r.plan()
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
	r.listed, r.live, r.all = map[string]wire.NoteListItem{}, map[string]bool{}, nil
	for page, err := range r.cl.Pages(ctx, 100) {
		if err != nil {
			return err
		}
		for _, n := range page.Notes {
			r.all = append(r.all, n)
			r.live[n.Cuid] = true
			if n.Path != nil {
				r.listed[note.MatchKey(*n.Path)] = n
			}
		}
	}
	return nil
}

// plan decides what the run does with each note and what --prune unshares, before
// anything is sent.
func (r *run) plan() error {
	for _, v := range r.finder.vaults {
		v.id = r.mapping.vaultID(v.root)
	}
	r.planMoves()
	r.steps = nil
	for _, p := range r.notes {
		prev, action := r.previous(p)
		if prev != nil && action != "move" && diff(prev, p).none() {
			action = "unchanged"
		}
		r.steps = append(r.steps, step{p, prev, action})
	}
	var err error
	r.doomed, err = r.pruneCandidates()
	return err
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
// the content of a note its vault published whose file is gone. It is updated in place,
// its path changed, at the same URL.
func (r *run) planMoves() {
	gone := map[string]string{} // vault id and content hash → path
	for _, path := range sortedPaths(r.states) {
		s := r.states[path]
		if v := r.vaultOf(s); v != nil && !r.finder.present[presentKey(v, path)] && !v.has(path) {
			gone[s.Vault+" "+s.ContentSHA256] = path
		}
	}
	for _, p := range r.notes {
		if r.states[p.path] != nil || r.opts.fresh {
			continue
		}
		if _, has := r.listed[note.MatchKey(p.path)]; has {
			continue
		}
		key := p.vault.id + " " + hashOf(p.content)
		if old, ok := gone[key]; ok {
			r.moves[p] = old
			delete(gone, key)
		}
	}
}

// vaultOf is the vault of the run that a state was published from, nil when none is.
func (r *run) vaultOf(s *publishedFile) *vault {
	for _, v := range r.finder.vaults {
		if s.Vault != "" && v.id == s.Vault {
			return v
		}
	}
	return nil
}

// has reports whether a vault path names a file of the vault.
func (v *vault) has(path string) bool {
	if v.index() != nil {
		return true // not known to be gone
	}
	_, ok := v.paths[note.MatchKey(path)]
	return ok
}

// previous is the publication a note updates and the action: its state (an overwrite when
// another vault published it), the state of the note it moved from, or the account's
// publication of its path (listed, its hashes unknown: all is sent; an overwrite unless
// an older client published it from this file); nil for a new publication.
func (r *run) previous(p *prepared) (*publishedFile, string) {
	if r.opts.fresh {
		return nil, "publish"
	}
	if s := r.states[p.path]; s != nil {
		if s.Vault != "" && s.Vault != p.vault.id {
			return s, "overwrite"
		}
		return s, "update"
	}
	if old, ok := r.moves[p]; ok {
		return r.states[old], "move"
	}
	old := r.legacy[p.file]
	if n, ok := r.listed[note.MatchKey(p.path)]; ok {
		if old != nil && old.Cuid == n.Cuid {
			return old, "update"
		}
		return &publishedFile{Cuid: n.Cuid, URL: n.URL, ETag: n.ETag}, "overwrite"
	}
	if old != nil {
		// Published by an older client, by file: its hashes of title and path are unknown,
		// so both are sent.
		return old, "update"
	}
	return nil, "publish"
}

// send publishes or updates one note, reports the outcome, and keeps its state. Only a
// refused session is returned (to log in again); every other failure is the note's.
func (r *run) send(ctx context.Context, st step) error {
	p, prev, outcome := st.p, st.prev, done[st.action]
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
			if prev.Vault == "" {
				prev.Vault = p.vault.id // an entry written before vaults had ids: this vault's now
			}
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
		fprintf(r.env.Stderr, "failed: %s: %v\n", p.path, noteError(err, prev))
		return nil
	}
	if old, moved := r.moves[p]; moved && st.action == "move" {
		delete(r.states, old)
	}
	r.states[p.path] = state
	r.counts[outcome]++
	r.report(p, outcome, state, warnings, res)
	// Kept after each note, so that a run cut short is not sent again.
	_ = writePrivate(r.env.Getenv, mappingName, r.mapping)
	return nil
}
