package notes

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/site"
)

// SitesCommand is the operator's `sites` command (docs/operations.md "Site handles"):
//
//	sites release-handle HANDLE
//
// A handle an account once used is never given to another account; releasing one that
// no site has now lets another account take it. It prints {"status":"released"}.
var SitesCommand = cli.Command{
	Name:     "sites",
	Summary:  "release a site handle that no site uses any more",
	Operator: true,
	Usage:    "release-handle HANDLE",
	Run:      runSites,
}

func runSites(ctx context.Context, env cli.Env, args []string) error {
	if len(args) != 2 || args[0] != "release-handle" {
		return fmt.Errorf("%w: sites release-handle HANDLE", cli.ErrUsage)
	}
	return app.WithSites(ctx, env, func(c *site.Core) error {
		if err := c.ReleaseHandle(ctx, args[1]); err != nil {
			return err
		}
		return json.NewEncoder(env.Stdout).Encode(map[string]string{"status": "released"})
	})
}
