// Package allinone is the single-process sharenote: every service mounted on one router,
// on the embedded default (SQLite and in-process limits) unless configured otherwise.
package allinone

import (
	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/services/auth"
	"github.com/sharenote/sharenote/services/notes"
)

// Program is the `sharenote` binary.
var Program = app.Program{
	Name:     "sharenote",
	Modules:  []app.Module{auth.New, notes.New},
	Commands: []app.Command{auth.LicensesCommand},
}
