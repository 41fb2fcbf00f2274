package publish

// The handler parses the three body formats of POST /api/publish into a draft. Every
// limit is enforced while reading, so no request makes the service hold more than the
// limit in memory; the images of a multipart body stream into the object store as they
// arrive (note.Upload), so that a request holds a small constant of each in memory.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
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
func (a *api) markdown(c *gin.Context) (note.Draft, error) {
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
func (a *api) json(c *gin.Context) (note.Draft, error) {
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

// textFields are the form fields of the multipart format (CONTRACT "Publish"); the values
// of other fields without a filename are read and dropped.
var textFields = map[string]bool{"content": true, "title": true, "summary": true, "show_properties": true,
	"expires_at": true, "properties": true}

// multipart is the multipart/form-data format: text fields, and one part per image whose
// field name is the exact filename. Parts are streamed: a text field is read up to the
// JSON limit, an image into d.Upload (up to MaxImageBytes), the whole request up to the
// route's limit. Reading stops at the first image over MaxImagesPerPublish, before its
// bytes.
func (a *api) multipart(c *gin.Context, boundary string, d *note.Draft) error {
	if boundary == "" {
		return errs.New(http.StatusBadRequest, errs.InvalidBody, "The multipart body has no boundary.")
	}
	body := &tailReader{r: c.Request.Body}
	mr := multipart.NewReader(body, boundary)
	d.ShowProperties = true
	fields := map[string]string{}
	seen := map[string]bool{}
	for {
		part, err := mr.NextPart()
		if err == io.EOF { //nolint:errorlint // Only the reader's own, unwrapped EOF means "done".
			// The reader also answers a bare EOF for a body cut short; only a body that
			// really ends with the close delimiter is complete.
			if !bytes.Contains(body.tail, []byte("--"+boundary+"--")) {
				return errs.New(http.StatusBadRequest, errs.InvalidBody, "The multipart body ends before its closing boundary.")
			}
			break
		}
		if err != nil {
			return multipartError(err)
		}
		name := part.FormName()
		if part.FileName() != "" {
			if seen[name] {
				return fmt.Errorf("%w: %s is uploaded twice", note.ErrInvalidImage, name)
			}
			seen[name] = true
			if err := readImage(c.Request.Context(), part, name, d.Upload); err != nil {
				return err
			}
			continue
		}
		if !textFields[name] {
			if err := readPart(part, routes.JSONLimit, io.Discard); err != nil {
				return textError(err)
			}
			continue
		}
		var buf bytes.Buffer
		if err := readPart(part, routes.JSONLimit, &buf); err != nil {
			return textError(err)
		}
		if !utf8.Valid(buf.Bytes()) {
			return noteapi.InvalidField(fmt.Sprintf("Form field %q is not valid UTF-8.", name))
		}
		fields[name] = buf.String()
	}
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
	var err error
	if v, ok := fields["show_properties"]; ok {
		if d.ShowProperties, err = parseBool("show_properties", v); err != nil {
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

// signatureBytes is enough of an image's first bytes for every signature CheckImage knows
// (WebP's is the longest: "RIFF", a size, "WEBP").
const signatureBytes = 12

// readImage checks an image part on its first bytes, before the rest is read, then
// streams it into up.
func readImage(ctx context.Context, part *multipart.Part, name string, up *note.Upload) error {
	head := make([]byte, signatureBytes)
	n, err := io.ReadFull(part, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF { //nolint:errorlint // ReadFull returns these unwrapped.
		return multipartError(err)
	}
	head = head[:n]
	mediaType, err := note.CheckImage(name, part.Header.Get("Content-Type"), head)
	if err != nil {
		return err
	}
	err = up.Add(ctx, name, mediaType, io.MultiReader(bytes.NewReader(head), part))
	if src := (*note.SourceError)(nil); errors.As(err, &src) {
		return multipartError(src.Err)
	}
	return err
}

// readPart copies a part of at most limit bytes to w; errPartTooLarge when it is longer.
// A failed read of the part is returned as it is.
func readPart(part io.Reader, limit int64, w io.Writer) error {
	n, err := io.Copy(w, io.LimitReader(part, limit+1))
	if err != nil {
		return err
	}
	if n > limit {
		return errPartTooLarge
	}
	return nil
}

// textError translates a failed read of a text field.
func textError(err error) error {
	if errors.Is(err, errPartTooLarge) {
		return httpx.TooLarge(routes.JSONLimit)
	}
	return multipartError(err)
}

// multipartError translates a failed read of the multipart body: over the route's limit
// is 413, below the minimum rate 408, anything else a body that does not parse.
func multipartError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) || errors.Is(err, httpx.ErrBodyTooSlow) {
		return httpx.ReadError(err)
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
