package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"go.opentelemetry.io/otel/trace/noop"
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/config"
	"github.com/sharenote/sharenote/libs/db"
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
	Run     func(ctx context.Context, env Env, args []string) error
}

// ErrUsage marks a command line that could not be understood (exit status 2).
var ErrUsage = errors.New("usage")

// Program is a binary: its modules (what `serve` mounts) and extra commands.
type Program struct {
	Name     string
	Modules  []Module
	Commands []Command
	// Default is the command run without arguments ("serve" for service binaries).
	Default string
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
func (p Program) Main(ctx context.Context, env Env, args []string) int {
	cmds := p.commands()
	name := p.Default
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	cmd, ok := cmds[name]
	if !ok {
		p.usage(env.Stderr, cmds)
		return 2
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

func (p Program) commands() map[string]Command {
	cmds := map[string]Command{
		"serve": {"serve", "serve the API (public and admin listeners)", p.serve},
		"migrate": {"migrate", "apply pending database migrations", func(ctx context.Context, env Env, _ []string) error {
			cfg, err := config.Load(env.Getenv)
			if err != nil {
				return err
			}
			gdb, err := db.Open(ctx, cfg.DatabaseURL, noop.NewTracerProvider())
			if err != nil {
				return err
			}
			defer db.Close(gdb)
			if err := db.Migrate(ctx, gdb); err != nil {
				return err
			}
			_, err = fmt.Fprintln(env.Stdout, `{"status":"migrated"}`)
			return err
		}},
		"routes": {"routes", "print the routes table", func(_ context.Context, env Env, _ []string) error {
			return routes.Print(env.Stdout)
		}},
		"version": {"version", "print the version", func(_ context.Context, env Env, _ []string) error {
			_, err := fmt.Fprintln(env.Stdout, Version)
			return err
		}},
	}
	for _, c := range p.Commands {
		cmds[c.Name] = c
	}
	return cmds
}

func (p Program) serve(ctx context.Context, env Env, _ []string) error {
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return err
	}
	return Run(ctx, cfg, Options{Process: p.Name, Modules: p.Modules, Getenv: env.Getenv, Logs: env.Stderr})
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
}

// WithDB opens the configured database (migrating the embedded default, checking
// Postgres) for an operator command and closes it afterwards.
func WithDB(ctx context.Context, env Env, fn func(*gorm.DB) error) error {
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return err
	}
	gdb, err := OpenDB(ctx, cfg.DatabaseURL, noop.NewTracerProvider())
	if err != nil {
		return err
	}
	defer db.Close(gdb)
	return fn(gdb)
}
