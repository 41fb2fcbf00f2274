package notes

import (
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/authn"
	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/openapi"
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

type listItem struct {
	CUID      string      `json:"cuid"`
	URL       string      `json:"url"`
	Title     *string     `json:"title"`
	Summary   *string     `json:"summary"`
	Status    note.Status `json:"status"`
	CreatedAt string      `json:"created_at"`
	UpdatedAt string      `json:"updated_at"`
	ExpiresAt *string     `json:"expires_at"`
	ETag      string      `json:"etag"`
}

type listResponse struct {
	Notes      []listItem `json:"notes"`
	NextCursor *string    `json:"next_cursor"`
}

type versionItem struct {
	Version      int64   `json:"version"`
	CreatedAt    string  `json:"created_at"`
	Title        *string `json:"title"`
	ContentBytes int     `json:"content_bytes"`
}

type versionBody struct {
	Version   int64  `json:"version"`
	CreatedAt string `json:"created_at"`
	noteText
}

// handlers attaches the handlers of the notes target to its routes; a route added to
// the target gets its line here.
func (a *api) handlers() app.Handlers {
	return app.Handlers{
		routes.NoteRead:        a.ReadNote,
		routes.NoteUpdate:      a.UpdateNote,
		routes.NoteVersions:    a.ListVersions,
		routes.NoteVersion:     a.ReadVersion,
		routes.NoteUnshare:     a.Unshare,
		routes.UserNotes:       a.ListNotes,
		routes.NotePage:        a.Page,
		routes.OpenAPIDocument: func(c *gin.Context) { c.Data(http.StatusOK, "application/json", openapi.JSON()) },
		routes.SettingsRead:    a.GetSettings,
		routes.SettingsReplace: a.ReplaceSettings,
		routes.SettingsUpdate:  a.UpdateSettings,
	}
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

var versionExpr = regexp.MustCompile(`^[1-9][0-9]*$`)

// ListVersions answers GET /api/notes/:cuid/versions.
func (a *api) ListVersions(c *gin.Context) {
	id := c.Param("cuid")
	if !cuid.Valid(id) {
		errs.Abort(c, errs.NotFoundError())
		return
	}
	vs, err := a.notes.Versions(c.Request.Context(), authn.Principal(c).AccountCUID, id)
	if err != nil {
		errs.Abort(c, err)
		return
	}
	items := make([]versionItem, len(vs))
	for i, v := range vs {
		items[i] = versionItem{Version: v.Number, CreatedAt: httpx.FormatTime(v.CreatedAt), Title: v.Title, ContentBytes: v.ContentBytes}
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, gin.H{"versions": items})
}

// ReadVersion answers GET /api/notes/:cuid/versions/:version.
func (a *api) ReadVersion(c *gin.Context) {
	raw := c.Param("version")
	if !versionExpr.MatchString(raw) {
		errs.Abort(c, errs.New(http.StatusBadRequest, errs.InvalidVersion, "The version must be a positive integer."))
		return
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	id := c.Param("cuid")
	if err != nil || !cuid.Valid(id) {
		errs.Abort(c, errs.NotFoundError()) // A positive integer too large to exist.
		return
	}
	v, err := a.notes.Version(c.Request.Context(), authn.Principal(c).AccountCUID, id, n)
	if err != nil {
		errs.Abort(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, versionBody{Version: v.Number, CreatedAt: httpx.FormatTime(v.CreatedAt),
		noteText: noteText{Title: v.Title, Summary: v.Summary, Content: v.Content, Properties: v.Properties,
			ShowProperties: v.ShowProperties, ExpiresAt: httpx.FormatTimePtr(v.ExpiresAt)}})
}

// Unshare answers POST /api/unshare.
func (a *api) Unshare(c *gin.Context) {
	var req struct {
		CUID *string `json:"cuid"`
	}
	if err := httpx.DecodeJSON(c, &req); err != nil {
		errs.Abort(c, err)
		return
	}
	if req.CUID == nil {
		errs.Abort(c, noteapi.InvalidField("cuid is required."))
		return
	}
	if !cuid.Valid(*req.CUID) {
		errs.Abort(c, errs.NotFoundError())
		return
	}
	if err := a.notes.Unpublish(c.Request.Context(), authn.Principal(c).AccountCUID, *req.CUID); err != nil {
		errs.Abort(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, gin.H{"cuid": *req.CUID, "status": note.Unpublished})
}

// ListNotes answers GET /api/user/notes.
func (a *api) ListNotes(c *gin.Context) {
	query, err := noteapi.Query(c.Request.URL.RawQuery, "cursor", "limit")
	if err != nil {
		errs.Abort(c, err)
		return
	}
	limit := note.ListDefault
	if raw, ok := query["limit"]; ok {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > note.ListMax {
			errs.Abort(c, errs.Newf(http.StatusBadRequest, errs.InvalidLimit, "limit must be an integer from 1 to %d.", note.ListMax))
			return
		}
		limit = n
	}
	rows, next, err := a.notes.List(c.Request.Context(), authn.Principal(c).AccountCUID, query["cursor"], limit)
	if err != nil {
		errs.Abort(c, err)
		return
	}
	resp := listResponse{Notes: make([]listItem, len(rows))}
	now := a.notes.Now()
	for i, p := range rows {
		resp.Notes[i] = listItem{CUID: p.CUID, URL: noteapi.PageURL(a.notes, p.CUID), Title: p.Title, Summary: p.Summary, Status: p.Status(now),
			CreatedAt: httpx.FormatTime(p.CreatedAt), UpdatedAt: httpx.FormatTime(p.UpdatedAt), ExpiresAt: httpx.FormatTimePtr(p.ExpiresAt),
			ETag: p.ETag}
	}
	if next != "" {
		resp.NextCursor = &next
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, resp)
}
