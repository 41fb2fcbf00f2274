package notes

import (
	"context"
	"encoding/json"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/readcache"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/wire"
)

// ReadNote answers GET /api/notes/:cuid from the read cache (a.noteJSON).
func (a *api) ReadNote(c *gin.Context) {
	id := c.Param("cuid")
	if !cuid.Valid(id) {
		noteapi.NotFoundJSON(c)
		return
	}
	a.public.ServeView(c, id, a.noteJSON)
}

// noteJSONRead is the read of a note's public JSON.
func (a *api) noteJSONRead() noteapi.ViewRead {
	return noteapi.ViewRead{Route: routes.NoteRead, Compress: true, NotFound: noteapi.NotFoundJSON,
		View: a.reader.ReadView, Tag: noteJSONTag, Build: a.buildNoteJSON}
}

// noteJSONTag is the validator of v's public JSON.
func noteJSONTag(v note.View) string {
	return noteapi.Tag(routes.NoteRead.Path, v.ETag, noteapi.SettingsTag(v))
}

// buildNoteJSON is the cache entry of v's public JSON.
func (a *api) buildNoteJSON(_ context.Context, v note.View, etag string) (*readcache.Entry, error) {
	body, err := json.Marshal(a.publicNote(v))
	if err != nil {
		return nil, err
	}
	return noteapi.Entry(v, etag, "application/json; charset=utf-8", body), nil
}

// publicNote is the public JSON of v.
func (a *api) publicNote(v note.View) wire.PublicNote {
	s := v.Owner
	body := wire.PublicNote{Ref: noteapi.Ref(a.publicURL, v.CUID), Title: v.Title, Summary: v.Summary, Content: v.Content,
		Appearance:  wire.Appearance{Theme: s.Theme, AccentColor: s.AccentColor, Font: s.Font},
		PublishedAt: wire.At(v.CreatedAt), UpdatedAt: wire.At(v.UpdatedAt),
		ExpiresAt: wire.AtPtr(v.ExpiresAt), ShowProperties: v.ShowProperties, Properties: map[string]any{}}
	if s.ShowAuthor {
		body.Author = &s.Name
	}
	if v.ShowProperties && v.Properties != nil {
		body.Properties = v.Properties
	}
	return body
}
