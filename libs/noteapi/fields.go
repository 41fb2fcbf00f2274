package noteapi

// One reader of a note body for every route that takes one: ReadDraft for the three
// formats of POST /api/publish, ReadPatch for the two of PATCH /api/notes/:cuid, each
// entered once by its handler. Each format becomes one JSON object (a JSON body is one
// already; formFields and headerFields convert the text of a multipart body and of a
// Markdown body's headers), and decodeBody reads it into the body's libs/wire type, the
// one definition of each body that the client sends and the OpenAPI document describes.
// The domain's parsers then check the values (expiry, properties).

import (
	"encoding/json"
	"errors"
	"fmt"
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
	"github.com/sharenote/sharenote/libs/wire"
)

// errPropertiesNotObject is the fault of properties that are not a JSON object.
var errPropertiesNotObject = fmt.Errorf("%w: properties must be a JSON object", note.ErrInvalidProperties)

// decodeBody reads a note body, one JSON object, into its wire type T (httpx.UnmarshalJSON:
// a member of the wrong type or a null where the type has none is invalid_field, members T
// does not name are ignored, docs/api.md "Publish"). Properties nested too deep are refused
// before anything is decoded, and properties that are not an object are invalid_properties.
func decodeBody[T any](body []byte) (T, error) {
	var v T
	if err := note.CheckBodyDepth(body); err != nil {
		return v, err
	}
	err := httpx.UnmarshalJSON(body, &v)
	if e := (*errs.Error)(nil); errors.As(err, &e) && e.Field == "properties" {
		return v, errPropertiesNotObject
	}
	return v, err
}

// multipartBody reads a multipart body (readMultipart): its text fields are the fields
// (formFields), and its images stream into up.
func multipartBody(c *gin.Context, boundary string, up *note.Upload) ([]byte, error) {
	text, err := readMultipart(c, boundary, up)
	if err != nil {
		return nil, err
	}
	return formFields(text)
}

// markdownBody reads a Markdown body (at most routes.JSONLimit bytes of UTF-8): the body
// is the content, the other fields come in headers (headerFields).
func markdownBody(c *gin.Context) ([]byte, error) {
	body, err := httpx.ReadBody(c, routes.JSONLimit)
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(body) {
		return nil, errs.New(http.StatusBadRequest, errs.InvalidBody, "The Markdown body is not valid UTF-8.")
	}
	return headerFields(string(body), c.Request.Header)
}

// expiry parses an expires_at field with the domain's parser; now is the domain's clock.
func expiry(s *string, now time.Time) (*time.Time, error) {
	if s == nil {
		return nil, nil
	}
	t, err := note.ParseExpiry(*s, now)
	return &t, err
}

// formFields converts the text fields of a multipart body to the JSON object decodeBody
// reads: properties is a JSON object as text, show_properties is true or false, the others
// are strings. A form field cannot be null, so it sets and never clears.
func formFields(text map[string]string) ([]byte, error) {
	fields := make(map[string]json.RawMessage, len(text))
	for name, v := range text {
		switch name {
		case "properties":
			if !json.Valid([]byte(v)) {
				return nil, errPropertiesNotObject
			}
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
	return json.Marshal(fields)
}

// noteHeaders are the headers of a Markdown publish that carry note fields, by field.
var noteHeaders = map[string]string{"summary": "X-Summary", "expires_at": "X-Expires-At", "show_properties": "X-Show-Properties",
	"path": "X-Path"}

// headerFields converts the note fields of a Markdown publish, whose body is the content
// and whose other fields come in headers, to the JSON object decodeBody reads. A header's
// value must be valid UTF-8; X-Path is percent-encoded UTF-8.
func headerFields(content string, h http.Header) ([]byte, error) {
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
// a draft (wire.PublishRequest): content is required, show_properties defaults to true. A
// multipart body's images stream into the upload newUpload makes, which the draft
// carries; the caller aborts it when ReadDraft or the publish fails.
func ReadDraft(c *gin.Context, newUpload func() (*note.Upload, error), now time.Time) (note.Draft, error) {
	body, up, err := readBody(c, publishFormats, newUpload)
	if err != nil {
		return note.Draft{}, err
	}
	r, err := decodeBody[wire.PublishRequest](body)
	if err != nil {
		return note.Draft{}, err
	}
	expires, err := expiry(r.ExpiresAt, now)
	if err != nil {
		return note.Draft{}, err
	}
	d := note.Draft{Content: r.Content, Title: r.Title, Summary: r.Summary, ShowProperties: true,
		Properties: r.Properties, ExpiresAt: expires, Path: r.Path, Upload: up}
	if r.ShowProperties != nil {
		d.ShowProperties = *r.ShowProperties
	}
	return d, nil
}

// ReadPatch reads the body of a PATCH, JSON or multipart, into a patch (wire.NoteUpdate:
// null clears title, summary, properties, expires_at and path); a multipart body's images
// stream into the upload newUpload makes, which the patch carries (the caller aborts it
// when ReadPatch or the update fails). A patch that changes nothing is invalid.
func ReadPatch(c *gin.Context, newUpload func() (*note.Upload, error), now time.Time) (note.Patch, error) {
	body, up, err := readBody(c, patchFormats, newUpload)
	if err != nil {
		return note.Patch{}, err
	}
	u, err := decodeBody[wire.NoteUpdate](body)
	if err != nil {
		return note.Patch{}, err
	}
	p := note.Patch{Content: u.Content, ShowProperties: u.ShowProperties, Upload: up,
		Title: Optional(u.Title), Summary: Optional(u.Summary), Path: Optional(u.Path), Properties: Optional(u.Properties)}
	if s, sent := u.ExpiresAt.Get(); sent {
		p.ExpiresAt.Set = true
		if p.ExpiresAt.Value, err = expiry(s, now); err != nil {
			return note.Patch{}, err
		}
	}
	if p.Empty() {
		return note.Patch{}, errs.New(http.StatusBadRequest, errs.InvalidBody,
			"The body must change at least one of content, title, summary, properties, show_properties, expires_at, path, or add an image.")
	}
	return p, nil
}

// Optional is the domain's form of an optional field of a change (a PATCH of a note, a
// change of the site).
func Optional[T any](o wire.Optional[T]) note.Optional[T] {
	v, sent := o.Get()
	return note.Optional[T]{Set: sent, Value: v}
}

// The body formats of a publish and of a PATCH, by media type.
var (
	publishFormats = []string{"text/markdown", "application/json", "multipart/form-data"}
	patchFormats   = []string{"application/json", "multipart/form-data"}
)

// readBody reads a note body in its format, one of formats, as one JSON object, and the
// upload newUpload made for a multipart body's images (nil for the others).
func readBody(c *gin.Context, formats []string, newUpload func() (*note.Upload, error)) ([]byte, *note.Upload, error) {
	mt, params, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil || !slices.Contains(formats, mt) {
		return nil, nil, errs.New(http.StatusBadRequest, errs.UnsupportedContentType,
			"Content-Type must be "+strings.Join(formats[:len(formats)-1], ", ")+" or "+formats[len(formats)-1]+".")
	}
	switch mt {
	case "text/markdown":
		body, err := markdownBody(c)
		return body, nil, err
	case "application/json":
		body, err := httpx.ReadBody(c, routes.JSONLimit)
		return body, nil, err
	}
	up, err := newUpload()
	if err != nil {
		return nil, nil, err
	}
	body, err := multipartBody(c, params["boundary"], up)
	return body, up, err
}
