package auth

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/accountdb"
	"github.com/sharenote/sharenote/libs/app"
)

// LicensesCommand is the operator's `licenses` command (CONTRACT.md "Auth"):
//
//	licenses create --name NAME --email EMAIL [--instance ID]
//	licenses create --license KEY [--instance ID]      (add an activation; = add-instance)
//	licenses add-instance --license KEY [--instance ID]
//	licenses deactivate --license KEY
//
// create and add-instance print {"license_key","instance_id","user_cuid"}; deactivate
// prints {"status":"deactivated"} without echoing the key.
var LicensesCommand = app.Command{
	Name:    "licenses",
	Summary: "create licenses, add activations, deactivate licenses",
	Run:     runLicenses,
}

func runLicenses(ctx context.Context, env app.Env, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: licenses create|add-instance|deactivate [flags]", app.ErrUsage)
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("licenses "+sub, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	name := fs.String("name", "", "account name (create)")
	email := fs.String("email", "", "account email (create)")
	instance := fs.String("instance", "", "activation (instance) id; random when empty")
	license := fs.String("license", "", "license key of an existing license")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", app.ErrUsage, err)
	}
	run := func(fn func(*account.Core) (any, error)) error {
		return app.WithDB(ctx, env, func(gdb *gorm.DB) error {
			out, err := fn(account.NewCore(accountdb.New(gdb), time.Now))
			if err != nil {
				return err
			}
			return printJSON(env.Stdout, out)
		})
	}
	switch {
	case sub == "create" && *license == "":
		if *name == "" || *email == "" {
			return fmt.Errorf("%w: create needs --name and --email (or --license to add an activation)", app.ErrUsage)
		}
		return run(func(c *account.Core) (any, error) { return c.CreateLicense(ctx, *name, *email, *instance) })
	case sub == "create" || sub == "add-instance":
		if *license == "" {
			return fmt.Errorf("%w: %s needs --license", app.ErrUsage, sub)
		}
		return run(func(c *account.Core) (any, error) { return c.AddInstance(ctx, *license, *instance) })
	case sub == "deactivate":
		if *license == "" {
			return fmt.Errorf("%w: deactivate needs --license", app.ErrUsage)
		}
		return run(func(c *account.Core) (any, error) {
			return map[string]string{"status": "deactivated"}, c.Deactivate(ctx, *license)
		})
	default:
		return fmt.Errorf("%w: unknown licenses subcommand %q", app.ErrUsage, sub)
	}
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	return enc.Encode(v)
}
