package clientcmd

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

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
	fmt.Fprintf(r.env.Stdout, "%s\t%s\t%s\n", outcome, state.URL, p.path)
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
	if len(r.warnings) > 0 {
		var parts []string
		for _, code := range slices.Sorted(maps.Keys(r.warnings)) {
			parts = append(parts, fmt.Sprintf("%s %d", code, r.warnings[code]))
		}
		line += "; warnings: " + strings.Join(parts, ", ")
	}
	fmt.Fprintln(r.env.Stderr, line)
}

// names are the names that lead to the account's publications once the run is done, by
// match key: their paths (without .md), base names and titles, and the aliases of the
// notes of the run.
type names struct{ paths, bases, others map[string]bool }

func (r *run) publishedNames() names {
	n := names{map[string]bool{}, map[string]bool{}, map[string]bool{}}
	add := func(p string) {
		p = strings.TrimSuffix(p, path.Ext(p))
		n.paths[matchKey(p)] = true
		n.bases[matchKey(path.Base(p))] = true
	}
	for _, item := range r.all {
		if item.Status != "active" {
			continue
		}
		if item.Path != nil {
			add(*item.Path)
		}
		if item.Title != nil {
			n.others[matchKey(*item.Title)] = true
		}
	}
	for p := range r.states {
		add(p)
	}
	for _, p := range r.notes {
		n.others[matchKey(p.title)] = true
		for _, a := range p.aliases {
			n.others[matchKey(a)] = true
		}
	}
	return n
}

// resolves reports whether a link target written in the note at from names one of the
// publications (CONTRACT "Vaults and links": a path from the note's folder or the root,
// a base name, an alias, a title).
func (n names) resolves(from, target string) bool {
	t := strings.TrimSpace(target)
	if strings.EqualFold(path.Ext(t), ".md") {
		t = t[:len(t)-3]
	}
	rel := path.Join(path.Dir(from), t)
	return n.paths[matchKey(rel)] || n.paths[matchKey(strings.TrimPrefix(path.Clean("/"+t), "/"))] ||
		!strings.Contains(t, "/") && n.bases[matchKey(t)] || n.others[matchKey(t)]
}
