package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace/noop"
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/changefeed"
	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/logging"
	"github.com/sharenote/sharenote/libs/redisx"
	"github.com/sharenote/sharenote/libs/routes"
)

// Version is the build's version, set with -ldflags "-X …/libs/app.Version=…".
var Version = "dev"

// Env is what a command may touch of its surroundings.
type Env struct {
	Getenv func(string) string
	Stdout io.Writer
	Stderr io.Writer
}

// Command is a subcommand of a program.
type Command struct {
	Name    string
	Summary string
	// Usage is what follows the command's name on its command line, as its help shows it
	// ("[flags]"); one line per form when it has several, empty when it takes nothing.
	Usage string
	// Example, when set, is shown in the command's help after the summary: command lines
	// to copy, one a line.
	Example string
	// Flags, when set, defines the command's flags on fs, so that its help can list them.
	// Run parses its own flags, best with the same function, so that the two cannot drift.
	Flags func(fs *flag.FlagSet)
	// Run runs the command. It is never called when the command line asks for help.
	Run func(ctx context.Context, env Env, args []string) error
}

// ErrUsage marks a command line that could not be understood (exit status 2).
var ErrUsage = errors.New("usage")

// Program is the binary: its modules (one per target, what `serve` may mount) and its
// commands beyond serve, migrate, reap, config, routes and version.
type Program struct {
	Name     string
	Modules  []Module
	Commands []Command
}

// Exec runs the program on the process's arguments and environment and exits with its
// status. SIGINT and SIGTERM cancel the context, which starts a graceful shutdown.
func (p Program) Exec() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := p.Main(ctx, Env{Getenv: os.Getenv, Stdout: os.Stdout, Stderr: os.Stderr}, os.Args[1:])
	stop()
	os.Exit(code)
}

// Main runs the program with args (without the program name) and returns the exit
// status: 0 on success, 1 on failure, 2 on a usage error.
//
// A command line that asks for help (-h, -help, --h or --help anywhere before a "--")
// prints usage on stdout and exits 0 without running anything, for every command alike, so
// that `sharenote migrate --help` cannot migrate and a command added later cannot forget
// it. As the first argument it asks for the program's usage; after a command's name, for
// the command's.
func (p Program) Main(ctx context.Context, env Env, args []string) int {
	cmds := p.commands()
	if len(args) > 0 && isHelp(args[0]) {
		p.usage(env.Stdout, cmds)
		return 0
	}
	var name string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	cmd, ok := cmds[name]
	if !ok {
		p.usage(env.Stderr, cmds)
		return 2
	}
	if asksForHelp(args) {
		p.commandUsage(env.Stdout, cmd)
		return 0
	}
	if err := cmd.Run(ctx, env, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(env.Stderr, "%s %s: %v\n", p.Name, name, err)
		if errors.Is(err, ErrUsage) {
			return 2
		}
		return 1
	}
	return 0
}

// isHelp reports whether arg is one of the flag package's spellings of the help flag.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--h", "--help":
		return true
	}
	return false
}

// asksForHelp reports whether a command's arguments ask for help. A help flag that is
// the value of another flag (`--name -h`) counts too: help is the harmless reading.
func asksForHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelp(a) {
			return true
		}
	}
	return false
}

// noArgs is the argument check of a command that takes none.
func noArgs(args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", ErrUsage, args[0])
	}
	return nil
}

func (p Program) commands() map[string]Command {
	cmds := map[string]Command{
		"serve": {Name: "serve", Summary: "serve the API's targets (public and admin listeners)", Usage: "[--target LIST]",
			Flags: func(fs *flag.FlagSet) { serveFlags(fs) }, Run: p.serve},
		"migrate": {Name: "migrate", Summary: "apply pending database migrations, then copy image bytes kept in the database into the object store",
			Run: runMigrate},
		"routes": {Name: "routes", Summary: "print the routes table, or with --targets the targets, one a line", Usage: "[--targets]",
			Flags: func(fs *flag.FlagSet) { routesFlags(fs) }, Run: func(_ context.Context, env Env, args []string) error {
				fs := flag.NewFlagSet("routes", flag.ContinueOnError)
				targets := routesFlags(fs)
				if err := ParseFlags(fs, args); err != nil {
					return err
				}
				if *targets {
					_, err := fmt.Fprintln(env.Stdout, strings.Join(routes.Targets, "\n"))
					return err
				}
				return routes.Print(env.Stdout)
			}},
		"version": {Name: "version", Summary: "print the version", Run: func(_ context.Context, env Env, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			_, err := fmt.Fprintln(env.Stdout, Version)
			return err
		}},
	}
	cmds[reapCommand.Name] = reapCommand
	cmds[configCommand.Name] = configCommand
	for _, c := range p.Commands {
		cmds[c.Name] = c
	}
	return cmds
}

// ParseFlags parses the flags of a command that takes no other argument: an unknown flag
// or a stray argument is a usage error (exit status 2). Main has answered a request for
// help before a command runs.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return noArgs(fs.Args())
}

// routesFlags defines the routes command's flags on fs.
func routesFlags(fs *flag.FlagSet) *bool {
	return fs.Bool("targets", false, "print the targets (what serve --target takes), one a line, for scripts")
}

// serveFlags defines serve's flags on fs; --target mirrors SHARE_TARGETS.
func serveFlags(fs *flag.FlagSet) *string {
	return fs.String("target", "", "targets to serve: a comma list of "+strings.Join(routes.Targets, ", ")+
		", or "+routes.All+" (default: $SHARE_TARGETS, else all)")
}

// serve runs the targets --target (else SHARE_TARGETS) names until ctx ends.
func (p Program) serve(ctx context.Context, env Env, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	target := serveFlags(fs)
	if err := ParseFlags(fs, args); err != nil {
		return err
	}
	getenv := env.Getenv
	if flagSet(fs, "target") {
		if *target == "" {
			return fmt.Errorf("%w: --target needs a comma list of targets, or %s", ErrUsage, routes.All)
		}
		getenv = func(name string) string {
			if name == "SHARE_TARGETS" {
				return *target
			}
			return env.Getenv(name)
		}
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	modules, err := p.modules(cfg.Targets)
	if err != nil {
		return err
	}
	return Run(ctx, cfg, Options{Process: processName(p.Name, cfg.Targets), Modules: modules, Getenv: getenv, Logs: env.Stderr})
}

// modules returns the program's modules of targets, in their order.
func (p Program) modules(targets []string) ([]Module, error) {
	out := make([]Module, 0, len(targets))
	for _, t := range targets {
		i := slices.IndexFunc(p.Modules, func(m Module) bool { return m.Name == t })
		if i < 0 {
			return nil, fmt.Errorf("%s has no module for target %s", p.Name, t)
		}
		out = append(out, p.Modules[i])
	}
	return out, nil
}

// flagSet reports whether the command line set the flag name (to any value, even empty).
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// processName names a process in logs and traces: the program for every target, else the
// program and its targets ("sharenote-notes").
func processName(program string, targets []string) string {
	if slices.Equal(targets, routes.Targets) {
		return program
	}
	return program + "-" + strings.Join(targets, "+")
}

func (p Program) usage(w io.Writer, cmds map[string]Command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "usage: %s <command> [flags]\n\ncommands:\n", p.Name)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].Summary)
	}
	fmt.Fprintf(w, "\n`%s <command> --help` describes a command.\n", p.Name)
}

// commandUsage prints cmd's help: its command lines, its summary and its flags.
func (p Program) commandUsage(w io.Writer, cmd Command) {
	prefix := "usage:"
	for _, form := range strings.Split(cmd.Usage, "\n") {
		fmt.Fprintf(w, "%s %s\n", prefix, strings.TrimSpace(p.Name+" "+cmd.Name+" "+form))
		prefix = "      "
	}
	fmt.Fprintf(w, "\n%s\n", cmd.Summary)
	if cmd.Example != "" {
		fmt.Fprintf(w, "\nexample:\n  %s\n", strings.ReplaceAll(cmd.Example, "\n", "\n  "))
	}
	if cmd.Flags == nil {
		return
	}
	fs := flag.NewFlagSet(cmd.Name, flag.ContinueOnError)
	cmd.Flags(fs)
	fs.SetOutput(w)
	fmt.Fprintln(w, "\nflags:")
	fs.PrintDefaults()
}

// WithDB opens the configured database (migrating the embedded default, checking
// Postgres) for an operator command and closes it afterwards.
func WithDB(ctx context.Context, env Env, fn func(*gorm.DB) error) error {
	return WithStores(ctx, env, func(gdb *gorm.DB, _ *changefeed.Feed) error { return fn(gdb) })
}

// WithStores is WithDB with the change feed, for a command whose changes the serving
// processes must hear of (a license deactivation revokes cached sessions). With Redis
// configured the events reach them before the command returns; without it they re-check
// within a second on their own.
func WithStores(ctx context.Context, env Env, fn func(*gorm.DB, *changefeed.Feed) error) error {
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return err
	}
	gdb, err := OpenDB(ctx, cfg.DatabaseURL, noop.NewTracerProvider())
	if err != nil {
		return err
	}
	defer db.Close(gdb)
	var rdb *redis.Client
	if cfg.RedisURL != "" {
		if rdb, err = redisx.Open(cfg.RedisURL); err != nil {
			return err
		}
		defer func() { _ = rdb.Close() }()
	}
	feed := changefeed.New(rdb, cfg.RedisKeyPrefix, logging.New(env.Stderr, cfg.LogLevel, "sharenote"), prometheus.NewRegistry())
	if err := fn(gdb, feed); err != nil {
		return err
	}
	if rdb == nil {
		return nil
	}
	if err := feed.Flush(ctx); err != nil {
		return fmt.Errorf("the change was made, but not announced to the serving processes (they see it within a second): %w", err)
	}
	return nil
}
