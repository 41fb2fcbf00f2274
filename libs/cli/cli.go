// Package cli is the command framework of the sharenote binary, shared by the operator's
// commands (libs/app, services/auth) and the client's (libs/client/clientcmd): commands
// with their flags and help, one dispatch of a command line, and its exit statuses (0 on
// success, 1 on failure, 2 on a command line that could not be understood or a change
// that was not made without the user's yes).
package cli

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
)

// Env is what a command may touch of its surroundings.
type Env struct {
	Getenv func(string) string
	Stdout io.Writer
	Stderr io.Writer
	// Main is the program's own command line (Program.Main sets it), for a command that
	// reads the program's help: completion.
	Main func(ctx context.Context, env Env, args []string) int
}

// Command is a subcommand of a program.
type Command struct {
	Name string
	// Summary is one line: what the command does. Details, when set, is what the
	// command's help says after it.
	Summary, Details string
	// Operator marks a command of whoever runs the service (serving, migrating,
	// licensing); the program's help lists the authors' commands first.
	Operator bool
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

// ErrNotDone marks a change a command did not make because it needs the user's yes (a
// confirmation, --yes, or a flag that says what was meant): exit status 2, nothing done.
var ErrNotDone = errors.New("not done")

// Program is a binary's command line: its name and its commands. Of two commands of one
// name, the later one counts.
type Program struct {
	Name     string
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
	cmds := make(map[string]Command, len(p.Commands))
	for _, c := range p.Commands {
		cmds[c.Name] = c
	}
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
	env.Main = p.Main
	if err := cmd.Run(ctx, env, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(env.Stderr, "%s %s: %v\n", p.Name, name, err)
		if errors.Is(err, ErrUsage) || errors.Is(err, ErrNotDone) {
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

// NoArgs is the argument check of a command that takes none.
func NoArgs(args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", ErrUsage, args[0])
	}
	return nil
}

// ParseFlags parses the flags of a command that takes no other argument: an unknown flag
// or a stray argument is a usage error (exit status 2). Main has answered a request for
// help before a command runs.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return NoArgs(fs.Args())
}

// Sections are the titles of the program's help over the authors' commands and the
// operators', in that order.
var Sections = [2]string{"commands for authors:", "commands for operators:"}

func (p Program) usage(w io.Writer, cmds map[string]Command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "usage: %s <command> [flags]\n", p.Name)
	for i, title := range Sections {
		fmt.Fprintf(w, "\n%s\n", title)
		for _, n := range names {
			if cmds[n].Operator == (i == 1) {
				fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].Summary)
			}
		}
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
	if cmd.Details != "" {
		fmt.Fprintf(w, "\n%s\n", cmd.Details)
	}
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
