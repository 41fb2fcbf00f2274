package auth

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/cli"
)

// LicensesCommand is the operator's `licenses` command (docs/operations.md "Licenses"):
//
//	licenses create --name NAME --email EMAIL [--instance ID]
//	licenses create --license KEY [--instance ID]      (add an activation; = add-instance)
//	licenses add-instance --license KEY [--instance ID]
//	licenses deactivate --license KEY
//
// create and add-instance print {"license_key","instance_id","user_cuid"}; deactivate
// prints {"status":"deactivated"} without echoing the key.
var LicensesCommand = cli.Command{
	Name:     "licenses",
	Summary:  "create licenses, add activations, deactivate licenses",
	Operator: true,
	Usage:    licensesUsage,
	Flags:    func(fs *flag.FlagSet) { new(licenseFlags).define(fs) },
	Run:      runLicenses,
}

// licensesUsage are the forms of the licenses command line.
const licensesUsage = `create --name NAME --email EMAIL [--instance ID]
create --license KEY [--instance ID]
add-instance --license KEY [--instance ID]
deactivate --license KEY`

// licenseFlags are the flags of every licenses subcommand.
type licenseFlags struct {
	name, email, instance, license string
}

func (f *licenseFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.name, "name", "", "account name (create)")
	fs.StringVar(&f.email, "email", "", "account email (create)")
	fs.StringVar(&f.instance, "instance", "", "activation (instance) id; random when empty")
	fs.StringVar(&f.license, "license", "", "license key of an existing license")
}

func runLicenses(ctx context.Context, env cli.Env, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: licenses create|add-instance|deactivate [flags] (see --help)", cli.ErrUsage)
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("licenses "+sub, flag.ContinueOnError)
	var f licenseFlags
	f.define(fs)
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	run := func(fn func(*account.Core) (any, error)) error {
		return app.WithAccounts(ctx, env, func(c *account.Core) error {
			out, err := fn(c)
			if err != nil {
				return err
			}
			return printJSON(env.Stdout, out)
		})
	}
	switch {
	case sub == "create" && f.license == "":
		if f.name == "" || f.email == "" {
			return fmt.Errorf("%w: create needs --name and --email (or --license to add an activation)", cli.ErrUsage)
		}
		return run(func(c *account.Core) (any, error) { return c.CreateLicense(ctx, f.name, f.email, f.instance) })
	case sub == "create" || sub == "add-instance":
		if f.license == "" {
			return fmt.Errorf("%w: %s needs --license", cli.ErrUsage, sub)
		}
		return run(func(c *account.Core) (any, error) { return c.AddInstance(ctx, f.license, f.instance) })
	case sub == "deactivate":
		if f.license == "" {
			return fmt.Errorf("%w: deactivate needs --license", cli.ErrUsage)
		}
		return run(func(c *account.Core) (any, error) {
			return map[string]string{"status": "deactivated"}, c.Deactivate(ctx, f.license)
		})
	default:
		return fmt.Errorf("%w: unknown licenses subcommand %q", cli.ErrUsage, sub)
	}
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	return enc.Encode(v)
}
