package notes

import (
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/authn"
	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/routes"
)

// noteText is what a publication and each of its versions hold, as the owner sees it.
type noteText struct {
	Title          *string        `json:"title"`
	Summary        *string        `json:"summary"`
	Content        string         `json:"content"`
	Properties     map[string]any `json:"properties"`
	ShowProperties bool           `json:"show_properties"`
	ExpiresAt      *string        `json:"expires_at"`
}

// ownerNote is the owner's view of a publication (CONTRACT "Publication (owner view)").
type ownerNote struct {
	CUID string `json:"cuid"`
	URL  string `json:"url"`
	noteText
	Status    note.Status       `json:"status"`
	CreatedAt string            `json:"created_at"`
	UpdatedAt string            `json:"updated_at"`
	ETag      string            `json:"etag"`
	Warnings  []noteapi.Warning `json:"warnings"`
}

func (a *api) owner(p note.Publication) ownerNote {
	return ownerNote{CUID: p.CUID, URL: noteapi.PageURL(a.notes, p.CUID),
		noteText: noteText{Title: p.Title, Summary: p.Summary, Content: p.Content, Properties: p.Properties,
			ShowProperties: p.ShowProperties, ExpiresAt: httpx.FormatTimePtr(p.ExpiresAt)},
		Status: p.Status(a.notes.Now()), CreatedAt: httpx.FormatTime(p.CreatedAt), UpdatedAt: httpx.FormatTime(p.UpdatedAt),
		ETag: p.ETag, Warnings: noteapi.Warnings(p.Warnings)}
}

// UpdateNote answers PATCH /api/notes/:cuid with the owner's view after the change. The
// body is JSON, or multipart/form-data with the same fields (as text) and images to add
// or replace (CONTRACT "Update"). The route's body limit is the multipart limit; a JSON
// body is held to the JSON limit.
func (a *api) UpdateNote(c *gin.Context) {
	p, err := a.update(c)
	if err != nil {
		errs.Abort(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	noteapi.SetETag(c, p)
	c.JSON(http.StatusOK, a.owner(p))
}

// update parses the PATCH and applies it. When a multipart PATCH fails, the images it
// stored are deleted and their quota released before it returns, as at publish.
func (a *api) update(c *gin.Context) (note.Publication, error) {
	ctx := c.Request.Context()
	account, id := authn.Principal(c).AccountCUID, c.Param("cuid")
	var patch note.Patch
	var err error
	if mt, params, perr := mime.ParseMediaType(c.GetHeader("Content-Type")); perr == nil && mt == "multipart/form-data" {
		if !cuid.Valid(id) {
			return note.Publication{}, errs.NotFoundError()
		}
		patch.Upload = a.notes.NewUploadTo(account, id)
		patch, err = a.multipartPatch(c, params["boundary"], patch.Upload)
	} else {
		patch, err = a.jsonPatch(c)
		if err == nil && !cuid.Valid(id) {
			err = errs.NotFoundError()
		}
	}
	if err == nil {
		patch.IfMatch = ifMatch(c.GetHeader("If-Match"))
		var p note.Publication
		if p, err = a.notes.Update(ctx, account, id, patch); err == nil {
			return p, nil
		}
	}
	if patch.Upload != nil {
		if err := patch.Upload.Abort(ctx); err != nil {
			a.log.WarnContext(ctx, "a failed update's images are left for the reaper", "err", err)
		}
	}
	return note.Publication{}, err
}

// jsonPatch reads a JSON PATCH body.
func (a *api) jsonPatch(c *gin.Context) (note.Patch, error) {
	if err := httpx.RequireJSON(c); err != nil {
		return note.Patch{}, err
	}
	body, err := httpx.ReadBody(c, routes.JSONLimit)
	if err != nil {
		return note.Patch{}, err
	}
	var fields map[string]json.RawMessage
	if err := httpx.UnmarshalJSON(body, &fields); err != nil {
		return note.Patch{}, err
	}
	return a.parsePatch(fields, nil)
}

// multipartPatch reads a multipart PATCH body: its text fields are the JSON fields as
// text (properties as a JSON object, show_properties true or false); a multipart field
// cannot be null, so it sets and never clears. The images stream into up.
func (a *api) multipartPatch(c *gin.Context, boundary string, up *note.Upload) (note.Patch, error) {
	text, err := noteapi.ReadMultipart(c, boundary, up)
	if err != nil {
		return note.Patch{Upload: up}, err
	}
	fields := make(map[string]json.RawMessage, len(text))
	for name, v := range text {
		switch name {
		case "properties":
			fields[name] = json.RawMessage(v)
		case "show_properties":
			b, err := noteapi.ParseBool(name, v)
			if err != nil {
				return note.Patch{Upload: up}, err
			}
			fields[name], _ = json.Marshal(b)
		default:
			fields[name], _ = json.Marshal(v)
		}
	}
	return a.parsePatch(fields, up)
}

// parsePatch reads the fields a PATCH may change; JSON null clears the optional ones.
// Unknown fields are ignored, as at publish; a body with nothing to change is invalid.
func (a *api) parsePatch(fields map[string]json.RawMessage, up *note.Upload) (note.Patch, error) {
	p := note.Patch{Upload: up}
	str := func(name string, raw json.RawMessage, nullable bool) (*string, error) {
		if string(raw) == "null" {
			if !nullable {
				return nil, noteapi.InvalidField(name + " cannot be null.")
			}
			return nil, nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, noteapi.InvalidField(name + " must be a string.")
		}
		return &s, nil
	}
	for name, raw := range fields {
		var err error
		switch name {
		case "content":
			p.Content, err = str(name, raw, false)
		case "title":
			p.Title.Set = true
			p.Title.Value, err = str(name, raw, true)
		case "summary":
			p.Summary.Set = true
			p.Summary.Value, err = str(name, raw, true)
		case "properties":
			p.Properties.Set = true
			var m map[string]any
			if m, err = noteapi.Properties(raw); m != nil {
				p.Properties.Value = &m
			}
		case "show_properties":
			var b bool
			if string(raw) == "null" || json.Unmarshal(raw, &b) != nil {
				err = noteapi.InvalidField("show_properties must be true or false.")
			}
			p.ShowProperties = &b
		case "expires_at":
			p.ExpiresAt.Set = true
			var s *string
			if s, err = str(name, raw, true); err == nil && s != nil {
				p.ExpiresAt.Value, err = noteapi.Expiry(*s, a.notes.Now())
			}
		}
		if err != nil {
			return note.Patch{Upload: up}, err
		}
	}
	if p.Empty() {
		return note.Patch{Upload: up}, errs.New(http.StatusBadRequest, errs.InvalidBody,
			"The body must change at least one of content, title, summary, properties, show_properties, expires_at, or add an image.")
	}
	return p, nil
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
