// Package publishapi parses the three body formats of POST /api/publish into a draft.
// Every limit is enforced while reading, so no request makes the service hold more than
// the limit in memory.
package publishapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/authn"
	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/routes"
)

// API serves POST /api/publish.
type API struct {
	notes *note.Core
}

// New returns the API on the note core.
func New(notes *note.Core) *API { return &API{notes: notes} }

type publishResponse struct {
	CUID string `json:"cuid"`
	URL  string `json:"url"`
}

// Publish creates a publication. The route's body limit is the multipart limit; the
// Markdown and JSON formats narrow it to theirs before reading.
func (a *API) Publish(c *gin.Context) {
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
		d, err = a.multipart(c, params["boundary"])
	default:
		err = unsupported()
	}
	if err != nil {
		errs.Abort(c, noteapi.Error(err))
		return
	}
	p, err := a.notes.Publish(c.Request.Context(), authn.Principal(c).AccountCUID, d)
	if err != nil {
		errs.Abort(c, noteapi.Error(err))
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, publishResponse{CUID: p.CUID, URL: a.notes.URL(p.CUID)})
}

func unsupported() error {
	return errs.New(http.StatusBadRequest, errs.UnsupportedContentType,
		"Content-Type must be text/markdown, application/json or multipart/form-data.")
}

// readLimited reads the body under the JSON/Markdown limit.
func readLimited(c *gin.Context) ([]byte, error) {
	if c.Request.ContentLength > routes.JSONLimit {
		return nil, httpx.TooLarge(routes.JSONLimit)
	}
	b, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, routes.JSONLimit))
	if err != nil {
		return nil, httpx.ReadError(err)
	}
	return b, nil
}

// markdown is the text/markdown format: the body is the note, options come in headers.
func (a *API) markdown(c *gin.Context) (note.Draft, error) {
	body, err := readLimited(c)
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
		if d.ShowProperties, err = parseBool("X-Show-Properties", s); err != nil {
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
func (a *API) json(c *gin.Context) (note.Draft, error) {
	body, err := readLimited(c)
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

// multipart is the multipart/form-data format: text fields, and one part per image whose
// field name is the exact filename. Parts are streamed: a text field is read up to the
// JSON limit, an image up to MaxImageBytes, the whole request up to the route's limit.
func (a *API) multipart(c *gin.Context, boundary string) (note.Draft, error) {
	if boundary == "" {
		return note.Draft{}, errs.New(http.StatusBadRequest, errs.InvalidBody, "The multipart body has no boundary.")
	}
	body := &tailReader{r: c.Request.Body}
	mr := multipart.NewReader(body, boundary)
	d := note.Draft{ShowProperties: true}
	fields := map[string]string{}
	seen := map[string]bool{}
	for {
		part, err := mr.NextPart()
		if err == io.EOF { //nolint:errorlint // Only the reader's own, unwrapped EOF means "done".
			// The reader also answers a bare EOF for a body cut short; only a body that
			// really ends with the close delimiter is complete.
			if !bytes.Contains(body.tail, []byte("--"+boundary+"--")) {
				return note.Draft{}, errs.New(http.StatusBadRequest, errs.InvalidBody, "The multipart body ends before its closing boundary.")
			}
			break
		}
		if err != nil {
			return note.Draft{}, multipartError(err)
		}
		name := part.FormName()
		if part.FileName() != "" {
			img, err := readImage(part, name)
			if err != nil {
				return note.Draft{}, err
			}
			if seen[name] {
				return note.Draft{}, fmt.Errorf("%w: %s is uploaded twice", note.ErrInvalidImage, name)
			}
			seen[name] = true
			d.Images = append(d.Images, img)
			continue
		}
		value, err := readPart(part, routes.JSONLimit)
		if errors.Is(err, errPartTooLarge) {
			return note.Draft{}, httpx.TooLarge(routes.JSONLimit)
		}
		if err != nil {
			return note.Draft{}, err
		}
		if !utf8.Valid(value) {
			return note.Draft{}, noteapi.InvalidField(fmt.Sprintf("Form field %q is not valid UTF-8.", name))
		}
		fields[name] = string(value)
	}
	content, ok := fields["content"]
	if !ok {
		return note.Draft{}, noteapi.InvalidField("content is required.")
	}
	d.Content = content
	if v, ok := fields["title"]; ok {
		d.Title = &v
	}
	if v, ok := fields["summary"]; ok {
		d.Summary = &v
	}
	var err error
	if v, ok := fields["show_properties"]; ok {
		if d.ShowProperties, err = parseBool("show_properties", v); err != nil {
			return note.Draft{}, err
		}
	}
	if v, ok := fields["expires_at"]; ok {
		if d.ExpiresAt, err = noteapi.Expiry(v, a.notes.Now()); err != nil {
			return note.Draft{}, err
		}
	}
	if v, ok := fields["properties"]; ok {
		if d.Properties, err = noteapi.Properties(json.RawMessage(v)); err != nil {
			return note.Draft{}, err
		}
	}
	return d, nil
}

// tailReader remembers the last bytes read through it, to check how a body ended.
type tailReader struct {
	r    io.Reader
	tail []byte
}

const tailSize = 1024

func (t *tailReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.tail = append(t.tail, p[:n]...)
	if len(t.tail) > tailSize {
		t.tail = append(t.tail[:0], t.tail[len(t.tail)-tailSize:]...)
	}
	return n, err
}

// errPartTooLarge is a part over its own limit, as opposed to the whole request over the
// route's limit (which surfaces as *http.MaxBytesError).
var errPartTooLarge = errors.New("part too large")

// readImage reads one image part and checks it.
func readImage(part *multipart.Part, name string) (note.Image, error) {
	data, err := readPart(part, note.MaxImageBytes)
	if errors.Is(err, errPartTooLarge) {
		return note.Image{}, errs.Newf(http.StatusRequestEntityTooLarge, errs.ImageTooLarge,
			"Image %q is larger than %d bytes.", name, note.MaxImageBytes)
	}
	if err != nil {
		return note.Image{}, err
	}
	mediaType, err := note.CheckImage(name, part.Header.Get("Content-Type"), data)
	if err != nil {
		return note.Image{}, err
	}
	return note.Image{Filename: name, MediaType: mediaType, Data: data}, nil
}

// readPart reads a part of at most limit bytes; errPartTooLarge when it is longer.
func readPart(part *multipart.Part, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(part, limit+1))
	if err != nil {
		return nil, multipartError(err)
	}
	if n > limit {
		return nil, errPartTooLarge
	}
	return buf.Bytes(), nil
}

func multipartError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return httpx.TooLarge(mbe.Limit)
	}
	return errs.New(http.StatusBadRequest, errs.InvalidBody, "The multipart body could not be parsed.")
}

func parseBool(field, s string) (bool, error) {
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, noteapi.InvalidField(field + " must be true or false.")
}
