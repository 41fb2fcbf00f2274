package publish

// The handler parses the three body formats of POST /api/publish into a draft. Every
// limit is enforced while reading, so no request makes the service hold more than the
// limit in memory; the images of a multipart body stream into the object store as they
// arrive (note.Upload), so that a request holds a small constant of each in memory.

import (
	"encoding/json"
	"log/slog"
	"mime"
	"net/http"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/authn"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/routes"
)

// api serves POST /api/publish.
type api struct {
	notes *note.Core
	log   *slog.Logger
}

type publishResponse struct {
	CUID     string            `json:"cuid"`
	URL      string            `json:"url"`
	ETag     string            `json:"etag"`
	Warnings []noteapi.Warning `json:"warnings"`
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
	if err != nil {
		errs.Abort(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	noteapi.SetETag(c, p)
	c.JSON(http.StatusOK, publishResponse{CUID: p.CUID, URL: noteapi.PageURL(a.notes, p.CUID), ETag: p.ETag, Warnings: noteapi.Warnings(p.Warnings)})
}

// publish parses the body in its format and publishes it. When a multipart publish
// fails, the images it stored are deleted and their quota released before it returns,
// so that the failure the client hears of has left nothing behind.
func (a *api) publish(c *gin.Context) (note.Publication, error) {
	ctx := c.Request.Context()
	account := authn.Principal(c).AccountCUID
	mt, params, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	var d note.Draft
	switch {
	case err != nil:
		err = unsupported()
	case mt == "text/markdown":
		d, err = a.markdown(c)
	case mt == "application/json":
		d, err = a.json(c)
	case mt == "multipart/form-data":
		d.Upload = a.notes.NewUpload(account)
		err = a.multipart(c, params["boundary"], &d)
	default:
		err = unsupported()
	}
	if err == nil {
		var p note.Publication
		if p, err = a.notes.Publish(ctx, account, d); err == nil {
			return p, nil
		}
	}
	if d.Upload != nil {
		if err := d.Upload.Abort(ctx); err != nil {
			a.log.WarnContext(ctx, "a failed publish's images are left for the reaper", "err", err)
		}
	}
	return note.Publication{}, err
}

func unsupported() error {
	return errs.New(http.StatusBadRequest, errs.UnsupportedContentType,
		"Content-Type must be text/markdown, application/json or multipart/form-data.")
}

// markdown is the text/markdown format: the body is the note, options come in headers.
func (a *api) markdown(c *gin.Context) (note.Draft, error) {
	body, err := httpx.ReadBody(c, routes.JSONLimit)
	if err != nil {
		return note.Draft{}, err
	}
	if !utf8.Valid(body) {
		return note.Draft{}, errs.New(http.StatusBadRequest, errs.InvalidBody, "The Markdown body is not valid UTF-8.")
	}
	d := note.Draft{Content: string(body), ShowProperties: true}
	if s := c.GetHeader("X-Summary"); s != "" {
		if !utf8.ValidString(s) {
			return note.Draft{}, noteapi.InvalidField("X-Summary is not valid UTF-8.")
		}
		d.Summary = &s
	}
	if s := c.GetHeader("X-Expires-At"); s != "" {
		if d.ExpiresAt, err = noteapi.Expiry(s, a.notes.Now()); err != nil {
			return note.Draft{}, err
		}
	}
	if s := c.GetHeader("X-Show-Properties"); s != "" {
		if d.ShowProperties, err = noteapi.ParseBool("X-Show-Properties", s); err != nil {
			return note.Draft{}, err
		}
	}
	return d, nil
}

type jsonRequest struct {
	Content        *string         `json:"content"`
	Title          *string         `json:"title"`
	Summary        *string         `json:"summary"`
	ShowProperties *bool           `json:"show_properties"`
	Properties     json.RawMessage `json:"properties"`
	ExpiresAt      *string         `json:"expires_at"`
}

// json is the application/json format. Unknown fields are ignored (CONTRACT "Publish").
func (a *api) json(c *gin.Context) (note.Draft, error) {
	body, err := httpx.ReadBody(c, routes.JSONLimit)
	if err != nil {
		return note.Draft{}, err
	}
	var req jsonRequest
	if err := httpx.UnmarshalJSON(body, &req); err != nil {
		return note.Draft{}, err
	}
	if req.Content == nil {
		return note.Draft{}, noteapi.InvalidField("content is required.")
	}
	d := note.Draft{Content: *req.Content, Title: req.Title, Summary: req.Summary, ShowProperties: true}
	if req.ShowProperties != nil {
		d.ShowProperties = *req.ShowProperties
	}
	if d.Properties, err = noteapi.Properties(req.Properties); err != nil {
		return note.Draft{}, err
	}
	if req.ExpiresAt != nil {
		if d.ExpiresAt, err = noteapi.Expiry(*req.ExpiresAt, a.notes.Now()); err != nil {
			return note.Draft{}, err
		}
	}
	return d, nil
}

// multipart is the multipart/form-data format (noteapi.ReadMultipart): the text fields
// make the draft, the images stream into d.Upload.
func (a *api) multipart(c *gin.Context, boundary string, d *note.Draft) error {
	fields, err := noteapi.ReadMultipart(c, boundary, d.Upload)
	if err != nil {
		return err
	}
	d.ShowProperties = true
	content, ok := fields["content"]
	if !ok {
		return noteapi.InvalidField("content is required.")
	}
	d.Content = content
	if v, ok := fields["title"]; ok {
		d.Title = &v
	}
	if v, ok := fields["summary"]; ok {
		d.Summary = &v
	}
	if v, ok := fields["show_properties"]; ok {
		if d.ShowProperties, err = noteapi.ParseBool("show_properties", v); err != nil {
			return err
		}
	}
	if v, ok := fields["expires_at"]; ok {
		if d.ExpiresAt, err = noteapi.Expiry(v, a.notes.Now()); err != nil {
			return err
		}
	}
	if v, ok := fields["properties"]; ok {
		if d.Properties, err = noteapi.Properties(json.RawMessage(v)); err != nil {
			return err
		}
	}
	return nil
}
