package publish

// The handler reads the three body formats of POST /api/publish into a draft
// (noteapi.ReadDraft). Every
// limit is enforced while reading, so no request makes the service hold more than the
// limit in memory; the images of a multipart body stream into the object store as they
// arrive (note.Upload), so that a request holds a small constant of each in memory.

import (
	"log/slog"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/authn"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/wire"
)

// api serves POST /api/publish.
type api struct {
	notes     *note.Publisher
	publicURL string
	log       *slog.Logger
}

// handlers attaches the handlers of the target to its routes; a route added to the
// target gets its line here.
func (a *api) handlers() app.Handlers {
	return app.Handlers{
		routes.PublishCreate: a.Publish,
	}
}

// Publish creates a publication. The route's body limit is the multipart limit; the
// Markdown and JSON formats narrow it to theirs before reading.
func (a *api) Publish(c *gin.Context) {
	p, err := a.publish(c)
	noteapi.AnswerWrite(c, p, err, func(p note.Publication) wire.PublishResponse {
		return wire.PublishResponse{Ref: noteapi.Ref(a.publicURL, p.CUID), ETag: p.ETag, Warnings: noteapi.Warnings(p.Warnings)}
	})
}

// publish reads the body and publishes it. When a multipart publish fails, the images it
// stored are deleted and their quota released before it returns, so that the failure the
// client hears of has left nothing behind.
func (a *api) publish(c *gin.Context) (note.Publication, error) {
	ctx := c.Request.Context()
	account := authn.Principal(c).AccountCUID
	var up *note.Upload
	d, err := noteapi.ReadDraft(c, func() (*note.Upload, error) {
		up = a.notes.NewUpload(account)
		return up, nil
	}, a.notes.Now())
	var p note.Publication
	if err == nil {
		p, err = a.notes.Publish(ctx, account, d)
	}
	if err != nil && up != nil {
		if err := up.Abort(ctx); err != nil {
			a.log.WarnContext(ctx, "a failed publish's images are left for the reaper", "err", err)
		}
	}
	return p, err
}
