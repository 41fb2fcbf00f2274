package clientcmd

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/client"
)

var publishCommand = cli.Command{
	Name:    "publish",
	Summary: "publish notes and folders of notes with the images they show",
	Details: "Every .md, except in hidden folders and notes saying publish: false, with its images found as Obsidian finds them " +
		"in the vault. Again, it updates the same URLs in place, sending only what changed. Prints " +
		"published|updated|unchanged|moved|overwritten|unshared, a tab, the URL, a tab, the note's path; failures and " +
		"warnings go to stderr, then one summary line.",
	Usage: "PATH... [--vault DIR] [--prune] [--yes] [--dry-run] [--follow-symlinks] [--new] [--server URL] [--json]",
	Example: "sharenote publish ~/Vault/Garden\nsharenote publish ~/Vault/Garden --prune --yes\n" +
		"sharenote publish notes/trip.md --json | jq -r .url",
	Flags: func(fs *flag.FlagSet) { new(publishOptions).define(fs) },
	Run:   printableErrors(runPublish),
}

// publishOptions are publish's flags.
type publishOptions struct {
	common
	vault          string
	prune, yes     bool
	dryRun, follow bool
	fresh          bool
}

func (o *publishOptions) define(fs *flag.FlagSet) {
	o.common.define(fs)
	fs.StringVar(&o.vault, "vault", "", "the vault's root folder, which paths are relative to; default: the nearest folder above holding .obsidian/, else the folder given, else the note's folder")
	fs.BoolVar(&o.prune, "prune", false, "also unshare what this machine published from the folders given of this vault and is no longer there, "+
		"or now says publish: false (asks first on a terminal)")
	fs.BoolVar(&o.yes, "yes", false, "do not ask before overwriting publications of the same paths that this vault did not publish, "+
		"nor before --prune unshares; needed for either without a terminal")
	fs.BoolVar(&o.dryRun, "dry-run", false, "list the notes, their paths, the attachments and the files they come from, "+
		"and what the run would publish, update, overwrite and unshare (it reads the account's list); change nothing")
	fs.BoolVar(&o.follow, "follow-symlinks", false, "read files that symlinks lead to outside the vault (refused by default)")
	fs.BoolVar(&o.fresh, "new", false, "publish new copies (other URLs, without a path), even of notes published from here before")
}

// largeUpload is the size of images from which a terminal shows the upload's progress.
const largeUpload = 1 << 20

func runPublish(ctx context.Context, env cli.Env, args []string) error {
	fs := flag.NewFlagSet("publish", flag.ContinueOnError)
	var o publishOptions
	o.define(fs)
	pos, err := parse(fs, args)
	if err == nil && len(pos) == 0 {
		err = fmt.Errorf("%w: publish takes notes (.md) or folders", cli.ErrUsage)
	}
	if err != nil {
		return err
	}
	f := newFinder(o.vault, o.follow)
	defer f.close()
	for _, p := range pos {
		if err := f.find(p); err != nil {
			return err
		}
	}
	r := &run{env: env, opts: o, finder: f, counts: map[string]int{}}
	r.prepareAll()
	if o.dryRun {
		return r.dryRun(ctx)
	}
	return withSession(ctx, env, o.server, func(cl *client.Client) error {
		return r.publish(ctx, cl)
	})
}

// publish plans the run, asks what needs asking, sends the prepared notes, prunes, and
// reports.
func (r *run) publish(ctx context.Context, cl *client.Client) error {
	if err := r.begin(ctx, cl); err != nil {
		return err
	}
	if err := r.approve(); err != nil {
		return err
	}
	for i, s := range r.steps {
		r.progress(i+1, len(r.steps), s.p.path)
		if err := r.send(ctx, s); err != nil {
			return err // a refused session: withSession logs in again and runs once more
		}
	}
	r.endProgress()
	r.unshare(ctx)
	r.summary()
	if err := writePrivate(r.env.Getenv, mappingName, r.mapping); err != nil {
		return fmt.Errorf("the notes are published, but the next publish will not know them: %w", err)
	}
	if r.failed > 0 {
		return fmt.Errorf("%d of %d notes failed (see above); running the same command again sends only what is missing", r.failed, len(r.notes)+r.unprepared)
	}
	return nil
}

// warnf prints a warning line on stderr.
func (r *run) warnf(format string, args ...any) {
	fprintf(r.env.Stderr, "warning: "+format+"\n", args...)
}

// progress shows n/N and the note's path on a terminal.
func (r *run) progress(n, total int, name string) {
	if isTerminal(r.env.Stderr) {
		fprintf(r.env.Stderr, "\r\033[K%d/%d %s", n, total, name)
		r.drawn = true
	}
}

func (r *run) endProgress() {
	if r.drawn {
		fmt.Fprint(r.env.Stderr, "\r\033[K")
		r.drawn = false
	}
}

// isStdinTerminal reports whether a person can answer a question.
func isStdinTerminal() bool { return isTerminal(os.Stdin) }
