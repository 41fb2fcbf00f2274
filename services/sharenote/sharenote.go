// Package sharenote is the sharenote program: every target and the operator
// commands, for the one binary. `sharenote serve --target notes` serves one target (a
// Deployment), `--target all` (the default) every target in one process.
package sharenote

import (
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/client/clientcmd"
	"github.com/sharenote/sharenote/services/auth"
	"github.com/sharenote/sharenote/services/images"
	"github.com/sharenote/sharenote/services/notes"
	"github.com/sharenote/sharenote/services/ogrenderer"
	"github.com/sharenote/sharenote/services/publish"
)

// Program is the `sharenote` binary. Targets holds one target per name of routes.Targets;
// a test keeps the two in step.
var Program = app.Program{
	Name:     "sharenote",
	Targets:  []app.Target{auth.Target, publish.Target, notes.Target, images.Target, ogrenderer.Target},
	Commands: append([]cli.Command{auth.LicensesCommand, notes.SitesCommand, clientcmd.Completion("sharenote")}, clientcmd.Commands...),
}
