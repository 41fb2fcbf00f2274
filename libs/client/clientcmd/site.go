package clientcmd

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/client"
	"github.com/sharenote/sharenote/libs/wire"
)

var siteCommand = flaggedCommand("site", "[set [--enable|--disable] [--handle H] [--root FOLDER]... [--home PATH] [--title T] [--dry-run] [--yes]]",
	func(fs *flag.FlagSet) { new(siteFlags).define(fs, new(common)) }, runSite,
	"show or change your site, your published vault at /@handle/\n"+
		"One key=value a line. set changes the fields given (an empty --handle, --home or --title resets it; --root replaces the roots, "+
		"\"\" is the whole vault). A change that would list notes shown until then only by link lists them and asks first on a "+
		"terminal; --dry-run only lists them; --yes does not ask (needed without a terminal).",
	"sharenote site set --handle ada --root Garden --enable --dry-run\nsharenote site set --title \"Ada's garden\"")

// siteFlags are the flags of site set.
type siteFlags struct {
	handle, home, title optionalFlag
	roots               rootsFlag
	enable, disable     bool
	dryRun, yes         bool
}

func (f *siteFlags) define(fs *flag.FlagSet, c *common) *siteFlags {
	c.define(fs)
	fs.Var(&f.handle, "handle", "the site's name in its URLs (2 to 40 of a-z, 0-9, -); empty: none")
	fs.Var(&f.roots, "root", "a vault folder whose notes are in the site; repeat for several; \"\" is the whole vault")
	fs.Var(&f.home, "home", "the path of the note shown at the site's root; empty: the default")
	fs.Var(&f.title, "title", "the site's name; empty: the handle")
	fs.BoolVar(&f.enable, "enable", false, "serve the site (needs a handle and a root)")
	fs.BoolVar(&f.disable, "disable", false, "stop serving the site")
	fs.BoolVar(&f.dryRun, "dry-run", false, "list the notes the change would put into the site, and change nothing")
	fs.BoolVar(&f.yes, "yes", false, "do not ask before listing notes")
	return f
}

// optionalFlag is a string flag that knows whether it was given.
type optionalFlag struct {
	value string
	set   bool
}

func (o *optionalFlag) String() string { return o.value }

func (o *optionalFlag) Set(s string) error { o.value, o.set = s, true; return nil }

// field is the flag as a field of a PATCH: left out, null when empty, else its value.
func (o optionalFlag) field() wire.Optional[string] {
	switch {
	case !o.set:
		return wire.Optional[string]{}
	case o.value == "":
		return wire.Clear[string]()
	}
	return wire.Set(o.value)
}

// rootsFlag is the repeatable --root.
type rootsFlag []string

func (r *rootsFlag) String() string { return strings.Join(*r, ",") }

func (r *rootsFlag) Set(s string) error { *r = append(*r, s); return nil }

// input is the PATCH the flags ask for.
func (f *siteFlags) input() (wire.SiteInput, error) {
	in := wire.SiteInput{Handle: f.handle.field(), Home: f.home.field(), Title: f.title.field()}
	if f.roots != nil {
		in.Roots = wire.Set([]string(f.roots))
	}
	switch {
	case f.enable && f.disable:
		return in, fmt.Errorf("%w: --enable and --disable together", cli.ErrUsage)
	case f.enable || f.disable:
		in.Enabled = wire.Set(f.enable)
	}
	if !f.handle.set && !f.home.set && !f.title.set && f.roots == nil && !f.enable && !f.disable {
		return in, fmt.Errorf("%w: site set needs a field to change (--enable, --disable, --handle, --root, --home, --title)", cli.ErrUsage)
	}
	return in, nil
}

func runSite(ctx context.Context, env cli.Env, args []string) error {
	fs := flag.NewFlagSet("site", flag.ContinueOnError)
	var c common
	f := new(siteFlags).define(fs, &c)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return withSession(ctx, env, c.server, func(cl *client.Client) error {
			s, err := cl.Site(ctx)
			return showSite(env, c, s, err)
		})
	case len(pos) == 1 && pos[0] == "set":
	default:
		return fmt.Errorf("%w: site takes no argument, or set and its flags", cli.ErrUsage)
	}
	in, err := f.input()
	if err != nil {
		return err
	}
	return withSession(ctx, env, c.server, func(cl *client.Client) error {
		if f.dryRun || !f.yes {
			preview, err := cl.UpdateSite(ctx, in, true)
			if err != nil {
				return err
			}
			if f.dryRun {
				return showListed(env, c, preview)
			}
			if preview.NewlyListed > 0 {
				if !isStdinTerminal() {
					return fmt.Errorf("%w: the change would list %d notes at %s (see them with --dry-run): pass --yes to list them without a terminal; nothing changed",
						cli.ErrNotDone, preview.NewlyListed, deref(preview.SiteURL))
				}
				if !approveListing(env, preview) {
					return nil
				}
			}
		}
		s, err := cl.UpdateSite(ctx, in, false)
		if err == nil && s.NewlyListed > 0 {
			confirm(env.Stderr, "Listed %d more notes at %s.", s.NewlyListed, deref(s.SiteURL))
		}
		return showSite(env, c, s, err)
	})
}

// approveListing names the notes a change would list on the site, shown until now only
// by link, and asks on the terminal whether to go on.
func approveListing(env cli.Env, preview *wire.Site) bool {
	for _, n := range preview.NewlyListedNotes {
		fprintf(env.Stderr, "  %s\t%s\n", n.Path, deref(n.Title))
	}
	if ask(env.Stderr, bufio.NewReader(os.Stdin), sprintf("List these %d notes at %s?", preview.NewlyListed, deref(preview.SiteURL))) {
		return true
	}
	fmt.Fprintln(env.Stderr, "Nothing changed.")
	return false
}

// showSite prints the site, one key=value a line, or its JSON.
func showSite(env cli.Env, c common, s *wire.Site, err error) error {
	if err != nil || c.json {
		return jsonOr(env, s, err)
	}
	fprintf(env.Stdout, "enabled=%t\nhandle=%s\nroots=%s\nhome=%s\ntitle=%s\nsite_url=%s\n",
		s.Enabled, deref(s.Handle), strings.Join(quoteAll(s.Roots), ","), deref(s.Home), deref(s.Title), deref(s.SiteURL))
	return nil
}

// showListed prints the notes a change would list, a path and a title a line, and how
// many; or the preview's JSON.
func showListed(env cli.Env, c common, preview *wire.Site) error {
	if c.json {
		return printJSON(env.Stdout, preview)
	}
	for _, n := range preview.NewlyListedNotes {
		fprintf(env.Stdout, "%s\t%s\n", n.Path, deref(n.Title))
	}
	confirm(env.Stderr, "%d notes would be listed at %s; nothing changed.", preview.NewlyListed, deref(preview.SiteURL))
	return nil
}

// quoteAll quotes each root, so that "" (the whole vault) shows.
func quoteAll(roots []string) []string {
	out := make([]string, len(roots))
	for i, r := range roots {
		out[i] = fmt.Sprintf("%q", r)
	}
	return out
}
