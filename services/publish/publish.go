// Package publish is the publish service: POST /api/publish in its three body formats
// (raw Markdown, JSON, multipart with images).
package publish

import (
	"time"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/routes"
)

// Target is the publish target.
var Target = app.Target{Name: routes.Publish, New: newParts,
	Needs: app.Needs{Database: app.ReadWrite, Redis: true, ObjectStore: true, Renderer: true, ChangeFeed: true,
		Jobs: []string{app.JobRender, app.JobNames, app.JobPurge}}}

// renderEvery is how often the publish target looks for renders to redo in the
// background (temporary ones, and those of an older renderer).
const renderEvery = 500 * time.Millisecond

// newParts builds the parts of the publish target: its handlers, and the background jobs
// every replica runs: the renders to redo (each publication is claimed by one replica),
// and the indexing of names the link index lacks or holds under an older version.
func newParts(d app.Deps) (app.Parts, error) {
	notes, err := d.Publisher()
	if err != nil {
		return app.Parts{}, err
	}
	renders, err := d.Renders()
	if err != nil {
		return app.Parts{}, err
	}
	a := &api{notes: notes, publicURL: d.Config.PublicURL, log: d.Log}
	return app.Parts{Handlers: a.handlers(), Jobs: []app.Job{
		{Name: app.JobRender, Every: renderEvery, Run: renders.RenderPending},
		{Name: app.JobNames, Every: renderEvery, Run: renders.IndexNames},
	}}, nil
}
