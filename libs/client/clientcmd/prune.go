package clientcmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/client"
	"github.com/sharenote/sharenote/libs/note"
)

// doomed is a publication --prune unshares.
type doomed struct{ path, cuid, url string }

// pruneCandidates are, with --prune, the publications of the folders given whose note is
// no longer there or now says publish: false: those of the mapping and, by their path,
// the account's others; never one whose note moved, nor one of a note found.
func (r *run) pruneCandidates() []doomed {
	if !r.opts.prune {
		return nil
	}
	keep := map[string]bool{}
	for _, n := range r.finder.notes {
		keep[note.MatchKey(n.path)] = true
	}
	for _, old := range r.moves {
		keep[note.MatchKey(old)] = true
	}
	seen := map[string]bool{}
	var out []doomed
	consider := func(p, cuid, url string) {
		if seen[cuid] || keep[note.MatchKey(p)] {
			return
		}
		for _, f := range r.finder.folders {
			if under(f.path, p) {
				seen[cuid] = true
				out = append(out, doomed{p, cuid, url})
				return
			}
		}
	}
	for _, p := range sortedPaths(r.states) {
		consider(p, r.states[p].Cuid, r.states[p].URL)
	}
	for _, item := range r.all {
		if item.Path != nil {
			consider(*item.Path, item.Cuid, item.URL)
		}
	}
	return out
}

// confirmPrune lists what --prune would unshare and asks on a terminal; --yes does not
// ask; without a terminal and without --yes it is a usage error, before anything is sent.
// A "no" leaves them all (nil).
func (r *run) confirmPrune(list []doomed) ([]doomed, error) {
	if len(list) == 0 {
		return nil, nil
	}
	if !r.opts.yes && !isStdinTerminal() {
		return nil, fmt.Errorf("%w: --prune would unshare %d publications (%s…): pass --yes to unshare them without a terminal",
			cli.ErrUsage, len(list), list[0].path)
	}
	if r.opts.yes {
		return list, nil
	}
	for _, d := range list {
		fmt.Fprintf(r.env.Stderr, "  %s\t%s\n", d.url, d.path)
	}
	fmt.Fprintf(r.env.Stderr, "Unshare these %d publications? [y/N] ", len(list))
	answer, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		fmt.Fprintln(r.env.Stderr, "Nothing unshared.")
		return nil, nil
	}
	return list, nil
}

// unshare unpublishes the doomed publications and forgets them.
func (r *run) unshare(ctx context.Context, list []doomed) {
	for _, d := range list {
		res, err := r.cl.Unshare(ctx, d.cuid)
		var apiErr *client.Error
		if err != nil && !(errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound) {
			r.failed++
			fmt.Fprintf(r.env.Stderr, "failed: unshare %s (%s): %v\n", d.path, d.url, err)
			continue
		}
		delete(r.states, d.path)
		r.unshared[d.cuid] = true
		r.counts["unshared"]++
		if r.opts.json && err == nil {
			_ = printJSON(r.env.Stdout, res)
		} else if !r.opts.json {
			fmt.Fprintf(r.env.Stdout, "unshared\t%s\t%s\n", d.url, d.path)
		}
	}
}

// dryRun lists the notes, their paths, the attachments with the files they come from, and
// what --prune would unshare by the mapping of the last login's account; it sends nothing.
func (r *run) dryRun() error {
	for _, p := range r.notes {
		fmt.Fprintf(r.env.Stdout, "note\t%s\t%s\n", p.path, p.file)
		for _, img := range p.images {
			fmt.Fprintf(r.env.Stdout, "attachment\t%s\t%s\n", img.name, img.rel)
		}
	}
	if r.opts.prune {
		r.dryPrune()
	}
	fmt.Fprintf(r.env.Stderr, "dry run: %d notes, nothing sent\n", len(r.notes))
	return nil
}

// dryPrune prints what --prune would unshare, by the mapping alone.
func (r *run) dryPrune() {
	creds, err := loadCredentials(r.env.Getenv)
	if err != nil {
		return
	}
	srv, err := server(r.opts.server, r.env.Getenv, creds)
	if err != nil || creds.Servers[srv] == nil {
		r.warnf("not logged in: what --prune would unshare is not known")
		return
	}
	m, err := loadMapping(r.env)
	if err != nil {
		return
	}
	r.states = m.notes(srv, creds.Servers[srv].UserCuid)
	r.moves = map[*prepared]string{}
	r.planMoves()
	for _, d := range r.pruneCandidates() {
		fmt.Fprintf(r.env.Stdout, "unshare\t%s\t%s\n", d.url, d.path)
	}
}
