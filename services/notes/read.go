package notes

import (
	"context"
	"encoding/json"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/readcache"
	"github.com/sharenote/sharenote/libs/routes"
)

// publicNote is the public JSON of a note (CONTRACT "Reads"): camelCase.
type publicNote struct {
	CUID           string         `json:"cuid"`
	URL            string         `json:"url"`
	Title          *string        `json:"title"`
	Summary        *string        `json:"summary"`
	Content        string         `json:"content"`
	Author         *string        `json:"author"`
	Appearance     appearance     `json:"appearance"`
	PublishedAt    string         `json:"publishedAt"`
	UpdatedAt      string         `json:"updatedAt"`
	ExpiresAt      *string        `json:"expiresAt"`
	ShowProperties bool           `json:"showProperties"`
	Properties     map[string]any `json:"properties"`
}

type appearance struct {
	Theme       string `json:"theme"`
	AccentColor string `json:"accentColor"`
	Font        string `json:"font"`
}

// ReadNote answers GET /api/notes/:cuid from the read cache.
func (a *api) ReadNote(c *gin.Context) {
	id := c.Param("cuid")
	if !cuid.Valid(id) {
		noteapi.NotFoundJSON(c)
		return
	}
	a.public.Serve(c, noteapi.Read{Route: routes.NoteRead, ID: id, Compress: true, NotFound: noteapi.NotFoundJSON,
		Load: noteapi.LoadView(a.notes.ReadView, id, func(v note.View) string {
			return noteapi.Tag(routes.NoteRead.Path, v.ETag, noteapi.SettingsTag(v))
		}, func(_ context.Context, v note.View, etag string) (*readcache.Entry, error) {
			body, err := json.Marshal(a.publicNote(v))
			if err != nil {
				return nil, err
			}
			return noteapi.Entry(v, etag, "application/json; charset=utf-8", body), nil
		})})
}

// publicNote is the public JSON of v.
func (a *api) publicNote(v note.View) publicNote {
	s := v.Owner
	body := publicNote{CUID: v.CUID, URL: noteapi.PageURL(a.notes, v.CUID), Title: v.Title, Summary: v.Summary, Content: v.Content,
		Appearance:  appearance{Theme: s.Theme, AccentColor: s.AccentColor, Font: s.Font},
		PublishedAt: httpx.FormatTime(v.CreatedAt), UpdatedAt: httpx.FormatTime(v.UpdatedAt),
		ExpiresAt: httpx.FormatTimePtr(v.ExpiresAt), ShowProperties: v.ShowProperties, Properties: map[string]any{}}
	if s.ShowAuthor {
		body.Author = &s.Name
	}
	if v.ShowProperties && v.Properties != nil {
		body.Properties = v.Properties
	}
	return body
}
