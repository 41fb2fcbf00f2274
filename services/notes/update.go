package notes

import (
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/authn"
	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/wire"
)

func (a *api) owner(p note.Publication) wire.OwnerNote {
	return wire.OwnerNote{Ref: noteapi.Ref(a.publicURL, p.CUID), NoteText: noteText(p.Text),
		Status: string(p.Status(a.notes.Now())), CreatedAt: wire.At(p.CreatedAt), UpdatedAt: wire.At(p.UpdatedAt),
		ETag: p.ETag, Warnings: noteapi.Warnings(p.Warnings)}
}

// noteText is the text of a publication or of one of its versions on the wire.
func noteText(t note.Text) wire.NoteText {
	return wire.NoteText{Title: t.DisplayTitle(), Path: t.Path, Summary: t.Summary, Content: t.Content, Properties: t.Properties,
		ShowProperties: t.ShowProperties, ExpiresAt: wire.AtPtr(t.ExpiresAt)}
}

// UpdateNote answers PATCH /api/notes/:cuid with the owner's view after the change. The
// body is JSON, or multipart/form-data with the same fields (as text) and images to add
// or replace (docs/api.md "Update"). The route's body limit is the multipart limit; a JSON
// body is held to the JSON limit.
func (a *api) UpdateNote(c *gin.Context) {
	p, err := a.update(c)
	noteapi.AnswerWrite(c, p, err, a.owner)
}

// update reads the PATCH's body and applies it. When a multipart PATCH fails, the images
// it stored are deleted and their quota released before it returns, as at publish.
func (a *api) update(c *gin.Context) (note.Publication, error) {
	ctx := c.Request.Context()
	account, id := authn.Principal(c).AccountCUID, c.Param("cuid")
	var up *note.Upload
	patch, err := noteapi.ReadPatch(c, func() (*note.Upload, error) {
		if !cuid.Valid(id) {
			return nil, errs.NotFoundError()
		}
		up = a.notes.NewUploadTo(account, id)
		return up, nil
	}, a.notes.Now())
	if err == nil && !cuid.Valid(id) {
		err = errs.NotFoundError()
	}
	var p note.Publication
	if err == nil {
		patch.IfMatch = ifMatch(c.GetHeader("If-Match"))
		p, err = a.notes.Update(ctx, account, id, patch)
	}
	if err != nil && up != nil {
		if err := up.Abort(ctx); err != nil {
			a.log.WarnContext(ctx, "a failed update's images are left for the reaper", "err", err)
		}
	}
	return p, err
}

// ifMatch reads an If-Match header: a list of etags, each quoted or bare, or "*".
func ifMatch(header string) []string {
	var out []string
	for _, t := range strings.Split(header, ",") {
		if t = strings.Trim(strings.TrimPrefix(strings.TrimSpace(t), "W/"), `"`); t != "" {
			out = append(out, t)
		}
	}
	return out
}
