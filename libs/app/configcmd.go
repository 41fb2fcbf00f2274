package app

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/config"
)

// configCommand shows and checks the configuration a process would run with, without
// opening anything (the loki -print-config-stderr and -verify-config of this binary).
var configCommand = cli.Command{
	Name:     "config",
	Summary:  "print every setting with its value and source, or verify them all",
	Details:  "Secrets are masked, and URLs show no password.",
	Operator: true,
	Usage:    "print\nverify",
	Example:  "sharenote config print\nSHARE_DATABASE_URL=postgres://… sharenote config verify",
	Run:      runConfig,
}

func runConfig(_ context.Context, env cli.Env, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: config print|verify (see --help)", cli.ErrUsage)
	}
	sub, args := args[0], args[1:]
	if err := cli.NoArgs(args); err != nil {
		return err
	}
	values := config.Inspect(env.Getenv)
	switch sub {
	case "print":
		if err := printConfig(env.Stdout, values); err != nil {
			return err
		}
		return reportBad(env.Stderr, values)
	case "verify":
		if err := reportBad(env.Stderr, values); err != nil {
			return err
		}
		fromEnv := 0
		for _, v := range values {
			if v.FromEnv {
				fromEnv++
			}
		}
		_, err := fmt.Fprintf(env.Stdout, "configuration OK: %d settings, %d from the environment\n", len(values), fromEnv)
		return err
	default:
		return fmt.Errorf("%w: unknown config subcommand %q", cli.ErrUsage, sub)
	}
}

// printConfig writes one line per setting, NAME=value and its source, so that the
// output reads like the environment it describes.
func printConfig(w io.Writer, values []config.Value) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, v := range values {
		source := "default"
		if v.FromEnv {
			source = "environment"
		}
		if v.Err != nil {
			source += ", invalid"
		}
		fmt.Fprintf(tw, "%s=%s\t# %s\n", v.Setting.Name, v.Shown, source)
	}
	return tw.Flush()
}

// reportBad writes one line per bad value and fails when there is one.
func reportBad(w io.Writer, values []config.Value) error {
	bad := 0
	for _, v := range values {
		if v.Err == nil {
			continue
		}
		bad++
		fmt.Fprintln(w, v.Err)
	}
	if bad > 0 {
		return fmt.Errorf("%d invalid setting(s)", bad)
	}
	return nil
}
