// Package clientcmd holds the client commands of the sharenote binary (docs/client.md),
// built on libs/client: login, publish, list, versions, unshare, settings, site. They follow
// gh's conventions: --json prints the API's JSON, otherwise plain lines for people and
// scripts; data goes to stdout, confirmations to stderr and only on a terminal; errors
// carry the API's message and exit 1, command lines that cannot be understood exit 2.
package clientcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/client"
	"github.com/sharenote/sharenote/libs/wire"
)

// Commands are the client commands, for cli.Program.Commands (through app.Program).
var Commands = []cli.Command{loginCommand, publishCommand, listCommand, versionsCommand, unshareCommand, settingsCommand, siteCommand}

// common are the flags of every client command.
type common struct {
	server string
	json   bool
}

func (c *common) define(fs *flag.FlagSet) {
	fs.StringVar(&c.server, "server", "", "the server's URL, https:// (http:// only to this machine); default: $SHARE_SERVER, else the server of the last login")
	fs.BoolVar(&c.json, "json", false, "print the API's JSON")
}

// parse parses a command line whose flags may come before, between and after its
// arguments, and returns the arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, fmt.Errorf("%w: %v", cli.ErrUsage, err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), nil
		}
		positional, args = append(positional, rest[0]), rest[1:]
	}
}

// commandLine parses a command line of the common flags and from least to most
// arguments, described by want when their number is wrong.
func commandLine(name string, args []string, least, most int, want string) (common, []string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var c common
	c.define(fs)
	pos, err := parse(fs, args)
	if err == nil && (len(pos) < least || len(pos) > most) {
		err = fmt.Errorf("%w: %s takes %s", cli.ErrUsage, name, want)
	}
	return c, pos, err
}

// commonCommand is a command of the common flags and of from least to most arguments
// (usage names them, want says what they are when their number is wrong): run gets them
// parsed.
func commonCommand(name, usage string, least, most int, want string,
	run func(ctx context.Context, env cli.Env, c common, pos []string) error, summary, example string) cli.Command {
	return flaggedCommand(name, usage, func(fs *flag.FlagSet) { new(common).define(fs) }, func(ctx context.Context, env cli.Env, args []string) error {
		c, pos, err := commandLine(name, args, least, most, want)
		if err != nil {
			return err
		}
		return run(ctx, env, c, pos)
	}, summary, example)
}

// flaggedCommand is a command whose flags, the common ones among them, flags defines.
func flaggedCommand(name, usage string, flags func(*flag.FlagSet), run func(ctx context.Context, env cli.Env, args []string) error,
	summary, example string) cli.Command {
	summary, details, _ := strings.Cut(summary, "\n")
	return cli.Command{Name: name, Summary: summary, Details: details, Usage: strings.TrimSpace(usage + " [--server URL] [--json]"), Example: example,
		Flags: flags, Run: printableErrors(run)}
}

// commandFlags parses a command line of the common flags and those define adds, and
// returns both.
func commandFlags[T any](name string, args []string, define func(*flag.FlagSet, *common) T) (common, T, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var c common
	v := define(fs, &c)
	return c, v, cli.ParseFlags(fs, args)
}

// printJSON prints v as one line of JSON, with the characters that would act on a
// terminal escaped (jsonPrintable).
func printJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(jsonPrintable(b.Bytes()))
	return err
}

// confirm tells a person at a terminal what was done; scripts get silence.
func confirm(w io.Writer, format string, args ...any) {
	if isTerminal(w) {
		fprintf(w, format+"\n", args...)
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

var loginCommand = commonCommand("login", "", 0, 0, "no arguments", runLogin,
	"log in with your license key; keeps a two-hour token\n"+
		"The key and instance id come from $SHARE_LICENSE_KEY and $SHARE_INSTANCE_ID, else from a prompt that does not echo them. "+
		"Only the two-hour token is kept, in the user config folder (sharenote/credentials.json, mode 0600).",
	"SHARE_LICENSE_KEY=… SHARE_INSTANCE_ID=… sharenote login --server https://share.example.com")

func runLogin(ctx context.Context, env cli.Env, c common, _ []string) error {
	creds, err := loadCredentials(env.Getenv)
	if err != nil {
		return err
	}
	srv, err := server(c.server, env.Getenv, creds)
	if err != nil {
		return err
	}
	key, instance, ok := licenseFromEnv(env.Getenv)
	if !ok {
		if key, instance, err = prompt(env.Stderr); err != nil {
			return err
		}
	}
	tok, err := login(ctx, env, creds, srv, key, instance)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(env.Stdout, struct {
			ExpiresAt wire.Time `json:"expires_at"`
			UserCuid  string    `json:"user_cuid"`
			User      wire.User `json:"user"`
		}{tok.ExpiresAt, tok.UserCuid, tok.User})
	}
	confirm(env.Stderr, "Logged in to %s as %s <%s> until %s.", srv, tok.User.Name, tok.User.Email, tok.ExpiresAt.Local().Format("15:04"))
	return nil
}

// prompt asks for the license key and instance id on the terminal without echoing them.
func prompt(w io.Writer) (key, instance string, err error) {
	fd := int(os.Stdin.Fd())
	if !term.IsTerminal(fd) {
		return "", "", fmt.Errorf("%w: set SHARE_LICENSE_KEY and SHARE_INSTANCE_ID, or run login on a terminal", cli.ErrUsage)
	}
	read := func(label string) (string, error) {
		fmt.Fprintf(w, "%s: ", label)
		b, err := term.ReadPassword(fd)
		fmt.Fprintln(w)
		return strings.TrimSpace(string(b)), err
	}
	if key, err = read("License key"); err != nil {
		return "", "", err
	}
	if instance, err = read("Instance id"); err != nil {
		return "", "", err
	}
	return key, instance, nil
}

var listCommand = flaggedCommand("list", "[--limit N]", func(fs *flag.FlagSet) { listFlags(fs, new(common)) }, runList,
	"list your publications, newest first\nOne a line: cuid, status, url, title.",
	"sharenote list --json | jq -r '.notes[].url'    # --json: each page as the API sent it, one a line")

func listFlags(fs *flag.FlagSet, c *common) *int {
	c.define(fs)
	return fs.Int("limit", 100, "publications per request, 1 to 100")
}

func runList(ctx context.Context, env cli.Env, args []string) error {
	c, limit, err := commandFlags("list", args, listFlags)
	if err != nil {
		return err
	}
	return withSession(ctx, env, c.server, func(cl *client.Client) error {
		for page, err := range cl.Pages(ctx, *limit) {
			if err != nil {
				return err
			}
			if c.json {
				if err := printJSON(env.Stdout, page); err != nil {
					return err
				}
				continue
			}
			for _, n := range page.Notes {
				fprintf(env.Stdout, "%s\t%s\t%s\t%s\n", n.Cuid, n.Status, n.URL, deref(n.Title))
			}
		}
		return nil
	})
}

var versionsCommand = commonCommand("versions", "CUID [N]", 1, 2, "CUID and optionally a version number", runVersions,
	"list the kept versions of a publication, or print one\n"+
		"Without N, one version a line: number, time, bytes, title; with N, version N's Markdown.",
	"sharenote versions k3v9x2m0q8w1e7r4t6y5u2i0\nsharenote versions k3v9x2m0q8w1e7r4t6y5u2i0 3 > before.md")

func runVersions(ctx context.Context, env cli.Env, c common, pos []string) error {
	cuid := pos[0]
	if len(pos) == 1 {
		return withSession(ctx, env, c.server, func(cl *client.Client) error {
			list, err := cl.Versions(ctx, cuid)
			if err != nil || c.json {
				return jsonOr(env, list, err)
			}
			for _, v := range list.Versions {
				fprintf(env.Stdout, "%d\t%s\t%d\t%s\n", v.Version, v.CreatedAt.Format("2006-01-02 15:04:05Z07:00"), v.ContentBytes, deref(v.Title))
			}
			return nil
		})
	}
	n, err := strconv.Atoi(pos[1])
	if err != nil || n < 1 {
		return fmt.Errorf("%w: the version %q is not a positive number", cli.ErrUsage, pos[1])
	}
	return withSession(ctx, env, c.server, func(cl *client.Client) error {
		v, err := cl.Version(ctx, cuid, n)
		if err != nil || c.json {
			return jsonOr(env, v, err)
		}
		content := v.Content
		if isTerminal(env.Stdout) {
			// Redirected, it is the note as written; shown, it must not drive the terminal.
			content = printableLines(content)
		}
		_, err = io.WriteString(env.Stdout, content)
		return err
	})
}

var unshareCommand = commonCommand("unshare", "CUID", 1, 1, "one CUID", runUnshare,
	"unpublish a publication; your Markdown file is not touched\nIts URL and images stop working.",
	"sharenote unshare k3v9x2m0q8w1e7r4t6y5u2i0")

func runUnshare(ctx context.Context, env cli.Env, c common, pos []string) error {
	return withSession(ctx, env, c.server, func(cl *client.Client) error {
		u, err := cl.Unshare(ctx, pos[0])
		if err != nil || c.json {
			return jsonOr(env, u, err)
		}
		confirm(env.Stderr, "Unpublished %s.", u.Cuid)
		return nil
	})
}

var settingsCommand = flaggedCommand("settings", "[--set KEY=VALUE]...", func(fs *flag.FlagSet) { settingsFlags(fs, new(common)) }, runSettings,
	"show or change your sharing settings and image storage\nOne key=value a line; --set changes a setting.",
	"sharenote settings --set theme=dark --set accent_color=#0a7d4f")

// assignments is a repeatable KEY=VALUE flag.
type assignments []string

func (a *assignments) String() string { return strings.Join(*a, " ") }

func (a *assignments) Set(s string) error {
	if !strings.Contains(s, "=") {
		return fmt.Errorf("%q is not KEY=VALUE", s)
	}
	*a = append(*a, s)
	return nil
}

func settingsFlags(fs *flag.FlagSet, c *common) *assignments {
	c.define(fs)
	var sets assignments
	fs.Var(&sets, "set", "change a setting, KEY=VALUE; repeat for several. Keys: name, show_author (true|false), "+
		"theme (system|light|dark), accent_color (#rrggbb), font (sans|serif|mono), indexable (true|false)")
	return &sets
}

func runSettings(ctx context.Context, env cli.Env, args []string) error {
	c, sets, err := commandFlags("settings", args, settingsFlags)
	if err != nil {
		return err
	}
	in, err := settingsInput(*sets)
	if err != nil {
		return err
	}
	return withSession(ctx, env, c.server, func(cl *client.Client) error {
		var p *wire.Profile
		var err error
		if len(*sets) == 0 {
			p, err = cl.Settings(ctx)
		} else {
			p, err = cl.UpdateSettings(ctx, in)
		}
		if err != nil || c.json {
			return jsonOr(env, p, err)
		}
		s := p.Settings
		fprintf(env.Stdout, "name=%s\nshow_author=%t\ntheme=%s\naccent_color=%s\nfont=%s\nindexable=%t\nimage_bytes_used=%d\nimage_limit_bytes=%d\n",
			s.Name, s.ShowAuthor, s.Theme, s.AccentColor, s.Font, s.Indexable, p.Storage.ImageBytesUsed, p.Storage.ImageLimitBytes)
		return nil
	})
}

// settingsInput turns --set KEY=VALUE into a PATCH body; the server checks the values.
func settingsInput(sets []string) (wire.SettingsInput, error) {
	var in wire.SettingsInput
	for _, s := range sets {
		key, value, _ := strings.Cut(s, "=")
		var err error
		switch key {
		case "name":
			in.Name = &value
		case "theme":
			in.Theme = &value
		case "accent_color":
			in.AccentColor = &value
		case "font":
			in.Font = &value
		case "show_author":
			in.ShowAuthor, err = parseBool(key, value)
		case "indexable":
			in.Indexable, err = parseBool(key, value)
		default:
			err = fmt.Errorf("%w: unknown setting %q (name, show_author, theme, accent_color, font, indexable)", cli.ErrUsage, key)
		}
		if err != nil {
			return in, err
		}
	}
	return in, nil
}

func parseBool(key, value string) (*bool, error) {
	b, err := strconv.ParseBool(value)
	if err != nil {
		return nil, fmt.Errorf("%w: %s takes true or false, not %q", cli.ErrUsage, key, value)
	}
	return &b, nil
}

// jsonOr returns err, or prints v as JSON when there is none.
func jsonOr(env cli.Env, v any, err error) error {
	if err != nil {
		return err
	}
	return printJSON(env.Stdout, v)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
