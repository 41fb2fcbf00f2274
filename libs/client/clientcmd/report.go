package clientcmd

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/wire"
)

// warnUnknownNoteLink is the server's warning of a link to no publication of the author's.
const warnUnknownNoteLink = "unknown_note_link"

// report prints a note's outcome: the API's JSON with --json, else the outcome, the URL
// and the note's path; the server's warnings go to stderr, except unknown_note_link,
// which a later note of the run may resolve: those are said at the end if still unknown.
func (r *run) report(p *prepared, outcome string, state *publishedFile, warnings []wire.Warning, res any) {
	r.endProgress()
	for _, w := range warnings {
		if w.Code == warnUnknownNoteLink {
			r.unknown = append(r.unknown, unknownLink{p, w.Ref})
			continue
		}
		if w.Code == "unresolved_reference" && p.unsent[w.Ref] {
			continue
		}
		r.warnings[w.Code]++
		r.warnf("%s: %s (%s: %s)", p.path, w.Message, w.Code, w.Ref)
	}
	if r.opts.json {
		_ = printJSON(r.env.Stdout, res)
		return
	}
	fprintf(r.env.Stdout, "%s\t%s\t%s\n", outcome, state.URL, p.path)
}

// summary prints the run's one summary line on stderr, after the unknown_note_link
// warnings of links still unresolved now that every note of the run is published.
func (r *run) summary() {
	names := r.publishedNames()
	for _, u := range r.unknown {
		if !names.resolves(u.from.path, u.ref) {
			r.warnings[warnUnknownNoteLink]++
			r.warnf("%s: no published note is %s (%s: %s)", u.from.path, u.ref, warnUnknownNoteLink, u.ref)
		}
	}
	if r.fileWarnings > 0 {
		r.warnings[fileNotSent] += r.fileWarnings
	}
	line := fmt.Sprintf("published %d, updated %d, unchanged %d, failed %d", r.counts["published"],
		r.counts["updated"]+r.counts["moved"], r.counts["unchanged"], r.failed)
	for _, what := range []string{"overwritten", "unshared"} {
		if n := r.counts[what]; n > 0 {
			line += fmt.Sprintf(", %s %d", what, n)
		}
	}
	if len(r.warnings) > 0 {
		var parts []string
		for _, code := range slices.Sorted(maps.Keys(r.warnings)) {
			parts = append(parts, sprintf("%s %d", code, r.warnings[code]))
		}
		line += "; warnings: " + strings.Join(parts, ", ")
	}
	fmt.Fprintln(r.env.Stderr, line)
}

// names are the names that lead to the account's publications once the run is done, as
// the server's link index holds them (note.Text.Names): their paths and base names, the
// titles of those without a path, and the aliases of the notes of the run (the list does
// not tell the others' aliases).
type names map[note.Name]bool

func (r *run) publishedNames() names {
	n := names{}
	add := func(t note.Text) {
		for _, name := range t.Names() {
			n[name] = true
		}
	}
	for _, item := range r.all {
		if item.Status == "active" && !r.unshared[item.Cuid] {
			add(note.Text{Path: item.Path, Title: item.Title})
		}
	}
	for p := range r.states {
		add(note.Text{Path: &p})
	}
	for _, p := range r.notes {
		for _, name := range p.names {
			n[name] = true
		}
	}
	return n
}

// resolves reports whether a link target written in the note at from names one of the
// publications, by the rules of docs/api.md "Vaults and links": a path from the note's
// folder or the root (with or without .md), a base name, an alias, a title.
func (n names) resolves(from, target string) bool {
	t := strings.TrimPrefix(strings.TrimSpace(target), "/")
	file := t
	if !strings.EqualFold(path.Ext(t), ".md") {
		file += ".md"
	}
	key := note.MatchKey(t)
	return n[note.Name{Kind: note.NamePath, Key: note.MatchKey(path.Join(path.Dir(from), file))}] ||
		n[note.Name{Kind: note.NamePath, Key: note.MatchKey(path.Clean(file))}] ||
		!strings.Contains(t, "/") && n[note.Name{Kind: note.NameBase, Key: note.MatchKey(strings.TrimSuffix(file, path.Ext(file)))}] ||
		n[note.Name{Kind: note.NameAlias, Key: key}] || n[note.Name{Kind: note.NameTitle, Key: key}]
}
