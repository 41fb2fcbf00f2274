package noteapi

// One decoder of a note's fields for every body that carries them: the three formats of
// POST /api/publish and the two of PATCH /api/notes/:cuid. Each format turns its fields
// into JSON values by name (a JSON body has them already; FormFields and HeaderFields
// convert the text of a multipart body and of a Markdown body's headers), and Fields reads
// them into the domain's note.Patch, which a publish turns into a note.Draft.

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/routes"
)

// JSONFields reads a JSON object body (at most routes.JSONLimit bytes): its members are
// the fields.
func JSONFields(c *gin.Context) (map[string]json.RawMessage, error) {
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

// MultipartFields reads a multipart body (ReadMultipart): its text fields are the fields
// (FormFields), and its images stream into up.
func MultipartFields(c *gin.Context, boundary string, up *note.Upload) (map[string]json.RawMessage, error) {
	text, err := ReadMultipart(c, boundary, up)
	if err != nil {
		return nil, err
	}
	return FormFields(text)
}

// MarkdownFields reads a Markdown body (at most routes.JSONLimit bytes of UTF-8): the body
// is the content, the other fields come in headers (HeaderFields).
func MarkdownFields(c *gin.Context) (map[string]json.RawMessage, error) {
	body, err := httpx.ReadBody(c, routes.JSONLimit)
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(body) {
		return nil, errs.New(http.StatusBadRequest, errs.InvalidBody, "The Markdown body is not valid UTF-8.")
	}
	return HeaderFields(string(body), c.Request.Header)
}

// Fields reads the note fields of a body into a patch, in name order so that the first bad
// field reported does not depend on the order the client sent. JSON null clears an
// optional field; content and show_properties cannot be null. Unknown fields are ignored
// (docs/api.md "Publish"). Values are checked by the domain's own parsers (expiry,
// properties); now is the domain's clock, for the expiry.
func Fields(fields map[string]json.RawMessage, now time.Time) (note.Patch, error) {
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

// FormFields converts the text fields of a multipart body to the JSON values Fields reads:
// properties is a JSON object as text, show_properties is true or false, the others are
// strings. A form field cannot be null, so it sets and never clears.
func FormFields(text map[string]string) (map[string]json.RawMessage, error) {
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

// HeaderFields converts the note fields of a Markdown publish, whose body is the content
// and whose other fields come in headers, to the JSON values Fields reads. A header's
// value must be valid UTF-8; X-Path is percent-encoded UTF-8.
func HeaderFields(content string, h http.Header) (map[string]json.RawMessage, error) {
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
	return FormFields(text)
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

// Draft reads the fields of a publish: content is required, show_properties defaults to
// true, a null optional field is left out. up holds the request's images, or is nil.
func Draft(fields map[string]json.RawMessage, up *note.Upload, now time.Time) (note.Draft, error) {
	p, err := Fields(fields, now)
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

// Patch reads the fields of a PATCH; up holds the images it adds or replaces, or is nil.
// A patch that changes nothing is invalid.
func Patch(fields map[string]json.RawMessage, up *note.Upload, now time.Time) (note.Patch, error) {
	p, err := Fields(fields, now)
	if err != nil {
		return note.Patch{}, err
	}
	if p.Upload = up; p.Empty() {
		return note.Patch{}, errs.New(http.StatusBadRequest, errs.InvalidBody,
			"The body must change at least one of content, title, summary, properties, show_properties, expires_at, path, or add an image.")
	}
	return p, nil
}
