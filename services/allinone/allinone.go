// Package allinone is the single-process sharenote: every service mounted on one router,
// on the embedded default (SQLite and in-process limits) unless configured otherwise.
package allinone

import (
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/services/auth"
	"github.com/sharenote/sharenote/services/images"
	"github.com/sharenote/sharenote/services/notes"
	"github.com/sharenote/sharenote/services/ogrenderer"
	"github.com/sharenote/sharenote/services/publish"
)

// Program is the `sharenote` binary.
var Program = app.Program{
	Name:     "sharenote",
	Modules:  []app.Module{auth.New, publish.New, notes.New, images.New, ogrenderer.New},
	Commands: []app.Command{auth.LicensesCommand, images.ReapCommand},
}
