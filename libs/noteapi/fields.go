package noteapi

// One reader of a note body for every route that takes one: ReadDraft for the three
// formats of POST /api/publish, ReadPatch for the two of PATCH /api/notes/:cuid, each
// entered once by its handler. Each format turns its fields into JSON values by name (a
// JSON body has them already; formFields and headerFields convert the text of a
// multipart body and of a Markdown body's headers), and decodeFields reads them into the
// domain's note.Patch, which a publish turns into a note.Draft.

import (
	"encoding/json"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/routes"
)

// jsonFields reads a JSON object body (at most routes.JSONLimit bytes): its members are
// the fields.
func jsonFields(c *gin.Context) (map[string]json.RawMessage, error) {
	body, err := httpx.ReadBody(c, routes.JSONLimit)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := httpx.UnmarshalJSON(body, &fields); err != nil {
		return nil, err
	}
	return fields, nil
}

// multipartFields reads a multipart body (readMultipart): its text fields are the fields
// (formFields), and its images stream into up.
func multipartFields(c *gin.Context, boundary string, up *note.Upload) (map[string]json.RawMessage, error) {
	text, err := readMultipart(c, boundary, up)
	if err != nil {
		return nil, err
	}
	return formFields(text)
}

// markdownFields reads a Markdown body (at most routes.JSONLimit bytes of UTF-8): the body
// is the content, the other fields come in headers (headerFields).
func markdownFields(c *gin.Context) (map[string]json.RawMessage, error) {
	body, err := httpx.ReadBody(c, routes.JSONLimit)
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(body) {
		return nil, errs.New(http.StatusBadRequest, errs.InvalidBody, "The Markdown body is not valid UTF-8.")
	}
	return headerFields(string(body), c.Request.Header)
}

// decodeFields reads the note fields of a body into a patch, in name order so that the first bad
// field reported does not depend on the order the client sent. JSON null clears an
// optional field; content and show_properties cannot be null. Unknown fields are ignored
// (docs/api.md "Publish"). Values are checked by the domain's own parsers (expiry,
// properties); now is the domain's clock, for the expiry.
func decodeFields(fields map[string]json.RawMessage, now time.Time) (note.Patch, error) {
	var p note.Patch
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		raw := fields[name]
		var err error
		switch name {
		case "content":
			p.Content, err = stringField(name, raw, false)
		case "title":
			p.Title.Set = true
			p.Title.Value, err = stringField(name, raw, true)
		case "summary":
			p.Summary.Set = true
			p.Summary.Value, err = stringField(name, raw, true)
		case "path":
			p.Path.Set = true
			p.Path.Value, err = stringField(name, raw, true)
		case "properties":
			p.Properties.Set = true
			var m map[string]any
			if m, err = note.ParseProperties(raw); m != nil {
				p.Properties.Value = &m
			}
		case "show_properties":
			var b bool
			if string(raw) == "null" || json.Unmarshal(raw, &b) != nil {
				err = InvalidField("show_properties must be true or false.")
			}
			p.ShowProperties = &b
		case "expires_at":
			p.ExpiresAt.Set = true
			var s *string
			if s, err = stringField(name, raw, true); err == nil && s != nil {
				var t time.Time
				t, err = note.ParseExpiry(*s, now)
				p.ExpiresAt.Value = &t
			}
		}
		if err != nil {
			return note.Patch{}, err
		}
	}
	return p, nil
}

// stringField decodes a string field; null is nil when the field may be cleared.
func stringField(name string, raw json.RawMessage, nullable bool) (*string, error) {
	if string(raw) == "null" {
		if !nullable {
			return nil, InvalidField(name + " cannot be null.")
		}
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, InvalidField(name + " must be a string.")
	}
	return &s, nil
}

// formFields converts the text fields of a multipart body to the JSON values decodeFields reads:
// properties is a JSON object as text, show_properties is true or false, the others are
// strings. A form field cannot be null, so it sets and never clears.
func formFields(text map[string]string) (map[string]json.RawMessage, error) {
	fields := make(map[string]json.RawMessage, len(text))
	for name, v := range text {
		switch name {
		case "properties":
			fields[name] = json.RawMessage(v)
		case "show_properties":
			b, err := parseBool(name, v)
			if err != nil {
				return nil, err
			}
			fields[name], _ = json.Marshal(b)
		default:
			fields[name], _ = json.Marshal(v)
		}
	}
	return fields, nil
}

// noteHeaders are the headers of a Markdown publish that carry note fields, by field.
var noteHeaders = map[string]string{"summary": "X-Summary", "expires_at": "X-Expires-At", "show_properties": "X-Show-Properties",
	"path": "X-Path"}

// headerFields converts the note fields of a Markdown publish, whose body is the content
// and whose other fields come in headers, to the JSON values decodeFields reads. A header's
// value must be valid UTF-8; X-Path is percent-encoded UTF-8.
func headerFields(content string, h http.Header) (map[string]json.RawMessage, error) {
	text := map[string]string{"content": content}
	for field, header := range noteHeaders {
		v := h.Get(header)
		if v == "" {
			continue
		}
		if header == "X-Path" {
			var err error
			if v, err = url.PathUnescape(v); err != nil {
				return nil, InvalidField("X-Path is not valid percent-encoding.")
			}
		}
		if !utf8.ValidString(v) {
			return nil, InvalidField(header + " is not valid UTF-8.")
		}
		if field == "show_properties" {
			if _, err := parseBool(header, v); err != nil {
				return nil, err
			}
		}
		text[field] = v
	}
	return formFields(text)
}

// parseBool reads a boolean form field or header: exactly true or false.
func parseBool(field, s string) (bool, error) {
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, InvalidField(field + " must be true or false.")
}

// ReadDraft reads the body of a publish, in its format (Markdown, JSON or multipart), into
// a draft: content is required, show_properties defaults to true, a null optional field
// is left out. A multipart body's images stream into the upload newUpload makes, which
// the draft carries; the caller aborts it when ReadDraft or the publish fails.
func ReadDraft(c *gin.Context, newUpload func() (*note.Upload, error), now time.Time) (note.Draft, error) {
	fields, up, err := readFields(c, publishFormats, newUpload)
	if err != nil {
		return note.Draft{}, err
	}
	p, err := decodeFields(fields, now)
	if err != nil {
		return note.Draft{}, err
	}
	if p.Content == nil {
		return note.Draft{}, InvalidField("content is required.")
	}
	d := note.Draft{Content: *p.Content, Title: p.Title.Value, Summary: p.Summary.Value, ShowProperties: true,
		ExpiresAt: p.ExpiresAt.Value, Path: p.Path.Value, Upload: up}
	if p.ShowProperties != nil {
		d.ShowProperties = *p.ShowProperties
	}
	if p.Properties.Value != nil {
		d.Properties = *p.Properties.Value
	}
	return d, nil
}

// ReadPatch reads the body of a PATCH, JSON or multipart, into a patch; a multipart
// body's images stream into the upload newUpload makes, which the patch carries (the
// caller aborts it when ReadPatch or the update fails). A patch that changes nothing is
// invalid.
func ReadPatch(c *gin.Context, newUpload func() (*note.Upload, error), now time.Time) (note.Patch, error) {
	fields, up, err := readFields(c, patchFormats, newUpload)
	if err != nil {
		return note.Patch{}, err
	}
	p, err := decodeFields(fields, now)
	if err != nil {
		return note.Patch{}, err
	}
	if p.Upload = up; p.Empty() {
		return note.Patch{}, errs.New(http.StatusBadRequest, errs.InvalidBody,
			"The body must change at least one of content, title, summary, properties, show_properties, expires_at, path, or add an image.")
	}
	return p, nil
}

// The body formats of a publish and of a PATCH, by media type.
var (
	publishFormats = []string{"text/markdown", "application/json", "multipart/form-data"}
	patchFormats   = []string{"application/json", "multipart/form-data"}
)

// readFields reads a note body in its format, one of formats: its fields, and the upload
// newUpload made for a multipart body's images (nil for the others).
func readFields(c *gin.Context, formats []string, newUpload func() (*note.Upload, error)) (map[string]json.RawMessage, *note.Upload, error) {
	mt, params, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil || !slices.Contains(formats, mt) {
		return nil, nil, errs.New(http.StatusBadRequest, errs.UnsupportedContentType,
			"Content-Type must be "+strings.Join(formats[:len(formats)-1], ", ")+" or "+formats[len(formats)-1]+".")
	}
	switch mt {
	case "text/markdown":
		fields, err := markdownFields(c)
		return fields, nil, err
	case "application/json":
		fields, err := jsonFields(c)
		return fields, nil, err
	}
	up, err := newUpload()
	if err != nil {
		return nil, nil, err
	}
	fields, err := multipartFields(c, params["boundary"], up)
	return fields, up, err
}
