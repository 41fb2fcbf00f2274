package clientcmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/client"
	"github.com/sharenote/sharenote/libs/note"
)

// doomed is a publication --prune unshares.
type doomed struct{ path, cuid, url string }

// pruneCandidates are, with --prune, the publications that this machine published from
// the folders given, of their vault, whose note is no longer there or now says publish:
// false: by the mapping's entries of that vault alone. Never a publication it only finds
// in the account's list, nor an entry of another vault or one written before vaults had
// ids, nor a note that moved, nor one that is there but could not be read, nor one the
// account no longer has.
//
// A vault root that moved is refused (errRootMoved): when an entry that another vault
// published lies, by that vault's root, inside a folder given, the folder was part of
// that vault when it was published and is in another now (a .obsidian/ planted in a
// subfolder, or the vault's own removed, or a CI checkout without it): its paths, and so
// what "no longer there" means, changed.
func (r *run) pruneCandidates() ([]doomed, error) {
	if !r.opts.prune {
		return nil, nil
	}
	paths := sortedPaths(r.states)
	for _, f := range r.finder.folders {
		folder := filepath.Join(f.vault.root, filepath.FromSlash(f.path))
		for _, path := range paths {
			s := r.states[path]
			if s.Vault == "" || s.Vault == f.vault.id || !r.live[s.Cuid] {
				continue
			}
			if root := r.mapping.vaultRoot(s.Vault); root != "" && inFolder(folder, filepath.Join(root, filepath.FromSlash(path))) {
				return nil, fmt.Errorf("%w: --prune: the vault root changed: %s was published as %s of the vault %s, "+
					"and its folder %s is now in the vault %s (a .obsidian/ folder added or removed, or a folder of the vault given alone?), where paths differ. "+
					"Pass --vault %[4]s to prune as before, or unshare what was published from there to start afresh",
					cli.ErrNotDone, filepath.Join(root, filepath.FromSlash(path)), path, root, folder, f.vault.root)
			}
		}
	}
	kept := map[string]bool{}
	for p, old := range r.moves {
		kept[presentKey(p.vault, old)] = true
	}
	var out []doomed
	for _, f := range r.finder.folders {
		own := 0
		for _, path := range paths {
			s := r.states[path]
			if s.Vault != f.vault.id || !under(f.path, path) {
				continue
			}
			own++
			key := presentKey(f.vault, path)
			if r.finder.present[key] || kept[key] || !r.live[s.Cuid] {
				continue
			}
			kept[key] = true // a folder given twice, or within another
			out = append(out, doomed{path, s.Cuid, s.URL})
		}
		if own == 0 {
			r.warnf("--prune: this machine published nothing from %s (the vault %s) yet: nothing to unshare there",
				filepath.Join(f.vault.root, filepath.FromSlash(f.path)), f.vault.root)
		}
	}
	return out, nil
}

// inFolder reports whether the file lies in folder, both absolute, by their names as
// notes' paths compare (note.MatchKey): one that might be is taken to be.
func inFolder(folder, file string) bool {
	return strings.HasPrefix(note.MatchKey(filepath.ToSlash(file)), strings.TrimSuffix(note.MatchKey(filepath.ToSlash(folder)), "/")+"/")
}

// approve asks before what the run would not do unasked: overwriting publications this
// vault did not publish (same path) and unsharing with --prune. It lists them and asks
// on a terminal; --yes does not ask; without a terminal and without --yes it is a usage
// error, before anything is sent. A "no" leaves those notes unsent, or nothing unshared.
func (r *run) approve() error {
	var overwrites []step
	for _, s := range r.steps {
		if s.action == "overwrite" {
			overwrites = append(overwrites, s)
		}
	}
	if len(overwrites) == 0 && len(r.doomed) == 0 || r.opts.yes {
		return nil
	}
	if !isStdinTerminal() {
		var what []string
		if len(overwrites) > 0 {
			what = append(what, sprintf("overwrite %d publications that this vault did not publish (%s…)", len(overwrites), overwrites[0].p.path))
		}
		if len(r.doomed) > 0 {
			what = append(what, sprintf("unshare %d publications with --prune (%s…)", len(r.doomed), r.doomed[0].path))
		}
		return fmt.Errorf("%w: publish would %s: pass --yes to do so without a terminal; nothing was sent", cli.ErrNotDone, strings.Join(what, ", and "))
	}
	if len(overwrites) > 0 {
		for _, s := range overwrites {
			fprintf(r.env.Stderr, "  %s\t%s\n", s.prev.URL, s.p.path)
		}
		if !r.ask(sprintf("Overwrite these %d publications, which this vault did not publish, in place?", len(overwrites))) {
			fmt.Fprintln(r.env.Stderr, "Nothing overwritten: those notes are not sent.")
			steps := r.steps[:0]
			for _, s := range r.steps {
				if s.action != "overwrite" {
					steps = append(steps, s)
				}
			}
			r.steps = steps
		}
	}
	if len(r.doomed) > 0 {
		for _, d := range r.doomed {
			fprintf(r.env.Stderr, "  %s\t%s\n", d.url, d.path)
		}
		if !r.ask(sprintf("Unshare these %d publications?", len(r.doomed))) {
			fmt.Fprintln(r.env.Stderr, "Nothing unshared.")
			r.doomed = nil
		}
	}
	return nil
}

// ask asks a question on the terminal and reports whether the answer is yes.
func (r *run) ask(question string) bool {
	if r.stdin == nil {
		r.stdin = bufio.NewReader(os.Stdin)
	}
	return ask(r.env.Stderr, r.stdin, question)
}

// ask writes question to w and reports whether the line read from in says yes.
func ask(w io.Writer, in *bufio.Reader, question string) bool {
	fmt.Fprintf(w, "%s [y/N] ", question)
	answer, _ := in.ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(answer))
	return a == "y" || a == "yes"
}

// unshare unpublishes the doomed publications and forgets them.
func (r *run) unshare(ctx context.Context) {
	for _, d := range r.doomed {
		res, err := r.cl.Unshare(ctx, d.cuid)
		var apiErr *client.Error
		if err != nil && !(errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound) {
			r.failed++
			fprintf(r.env.Stderr, "failed: unshare %s (%s): %v\n", d.path, d.url, err)
			continue
		}
		delete(r.states, d.path)
		r.unshared[d.cuid] = true
		r.counts["unshared"]++
		if r.opts.json && err == nil {
			_ = printJSON(r.env.Stdout, res)
		} else if !r.opts.json {
			fprintf(r.env.Stdout, "unshared\t%s\t%s\n", d.url, d.path)
		}
	}
}

// dryRun lists the notes, their paths, the attachments with the files they come from,
// and, when a session can be had (it reads the account's list; nothing is changed), the
// run's plan: a line per note, as the run's line (the action, the URL, "-" for a new
// publication, and the path), then what --prune would unshare. It refuses what the run
// would refuse.
func (r *run) dryRun(ctx context.Context) error {
	planned := false
	if r.canSession() {
		err := withSession(ctx, r.env, r.opts.server, func(cl *client.Client) error {
			return r.begin(ctx, cl)
		})
		if err != nil {
			return err
		}
		planned = true
	} else {
		r.warnf("not logged in: what the run would publish, update, overwrite and unshare is not known (run `sharenote login`)")
	}
	steps := map[*prepared]step{}
	for _, s := range r.steps {
		steps[s.p] = s
	}
	counts := map[string]int{}
	for _, p := range r.notes {
		fprintf(r.env.Stdout, "note\t%s\t%s\n", p.path, p.file)
		for _, img := range p.images {
			fprintf(r.env.Stdout, "attachment\t%s\t%s\n", img.name, img.rel)
		}
		if s, ok := steps[p]; ok {
			url := "-"
			if s.prev != nil {
				url = s.prev.URL
			}
			fprintf(r.env.Stdout, "%s\t%s\t%s\n", s.action, url, p.path)
			counts[s.action]++
		}
	}
	for _, d := range r.doomed {
		fprintf(r.env.Stdout, "unshare\t%s\t%s\n", d.url, d.path)
	}
	if !planned {
		fmt.Fprintf(r.env.Stderr, "dry run: %d notes, nothing sent\n", len(r.notes))
		return nil
	}
	fmt.Fprintf(r.env.Stderr, "dry run: publish %d, update %d, unchanged %d, move %d, overwrite %d, unshare %d; nothing sent\n",
		counts["publish"], counts["update"], counts["unchanged"], counts["move"], counts["overwrite"], len(r.doomed))
	return nil
}

// canSession reports whether withSession can run without asking: a server, and a session
// of it or the license in the environment to log in with.
func (r *run) canSession() bool {
	creds, err := loadCredentials(r.env.Getenv)
	if err != nil {
		return false
	}
	srv, err := server(r.opts.server, r.env.Getenv, creds)
	if err != nil {
		return false
	}
	_, _, canRenew := licenseFromEnv(r.env.Getenv)
	tok := creds.Servers[srv]
	return canRenew || tok != nil && time.Until(tok.ExpiresAt.Time) >= renewBefore
}
