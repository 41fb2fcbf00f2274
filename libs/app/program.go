package app

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/routes"
)

// Version is the build's version, set with -ldflags "-X …/libs/app.Version=…".
var Version = "dev"

// Program is the binary: its targets (what `serve` may mount) and its commands beyond
// serve, migrate, reap, config, routes and version.
type Program struct {
	Name     string
	Targets  []Target
	Commands []cli.Command
}

// Exec runs the program on the process's arguments and environment and exits with its
// status, as cli.Program.Exec does.
func (p Program) Exec() { p.cli().Exec() }

// Main runs the program with args (without the program name) and returns the exit
// status, as cli.Program.Main does.
func (p Program) Main(ctx context.Context, env cli.Env, args []string) int {
	return p.cli().Main(ctx, env, args)
}

// cli is the program's command line: the operator's commands, then p.Commands, which
// replace one of the same name.
func (p Program) cli() cli.Program {
	return cli.Program{Name: p.Name, Commands: append([]cli.Command{
		{Name: "serve", Summary: "serve the API's targets (public and admin listeners)", Usage: "[--target LIST]", Operator: true,
			Flags: func(fs *flag.FlagSet) { serveFlags(fs) }, Run: p.serve},
		{Name: "migrate", Summary: "apply pending database migrations", Operator: true,
			Details: "Then grant the roles of SHARE_DATABASE_ROLES, and copy image bytes kept in the database into the object store.",
			Run:     p.migrate},
		{Name: "routes", Summary: "print the routes table, the targets, or what each target needs", Operator: true,
			Details: "With --targets the targets, one a line; with --needs what each needs.",
			Usage:   "[--targets | --needs]", Flags: func(fs *flag.FlagSet) { routesFlags(fs) }, Run: p.routes},
		{Name: "version", Summary: "print the version", Run: func(_ context.Context, env cli.Env, args []string) error {
			if err := cli.NoArgs(args); err != nil {
				return err
			}
			_, err := fmt.Fprintln(env.Stdout, Version)
			return err
		}},
		reapCommand,
		configCommand,
	}, p.Commands...)}
}

// routes is `sharenote routes`: the routes table, with --targets the targets, with --needs
// the table of what each target needs.
func (p Program) routes(_ context.Context, env cli.Env, args []string) error {
	fs := flag.NewFlagSet("routes", flag.ContinueOnError)
	targets, needs := routesFlags(fs)
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *targets && *needs:
		return fmt.Errorf("%w: --targets and --needs exclude each other", cli.ErrUsage)
	case *targets:
		_, err := fmt.Fprintln(env.Stdout, strings.Join(routes.Targets, "\n"))
		return err
	case *needs:
		return PrintNeeds(env.Stdout, p.Targets)
	}
	return routes.Print(env.Stdout)
}

// routesFlags defines the routes command's flags on fs.
func routesFlags(fs *flag.FlagSet) (targets, needs *bool) {
	return fs.Bool("targets", false, "print the targets (what serve --target takes), one a line, for scripts"),
		fs.Bool("needs", false, "print what each target needs (database access, Redis, object store, renderer, change feed, jobs) as a Markdown table")
}

// serveFlags defines serve's flags on fs; --target mirrors SHARE_TARGETS.
func serveFlags(fs *flag.FlagSet) *string {
	return fs.String("target", "", "targets to serve: a comma list of "+strings.Join(routes.Targets, ", ")+
		", or "+routes.All+" (default: $SHARE_TARGETS, else all)")
}

// serve runs the targets --target (else SHARE_TARGETS) names until ctx ends.
func (p Program) serve(ctx context.Context, env cli.Env, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	target := serveFlags(fs)
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	getenv := env.Getenv
	if flagSet(fs, "target") {
		if *target == "" {
			return fmt.Errorf("%w: --target needs a comma list of targets, or %s", cli.ErrUsage, routes.All)
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
	targets, err := p.targets(cfg.Targets)
	if err != nil {
		return err
	}
	return Run(ctx, cfg, Options{Process: processName(p.Name, cfg.Targets), Targets: targets, Getenv: getenv, Logs: env.Stderr})
}

// targets returns the program's targets of the names, in their order.
func (p Program) targets(names []string) ([]Target, error) {
	out := make([]Target, 0, len(names))
	for _, name := range names {
		i := slices.IndexFunc(p.Targets, func(t Target) bool { return t.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("%s has no target %s", p.Name, name)
		}
		out = append(out, p.Targets[i])
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
