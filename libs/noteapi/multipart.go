package noteapi

// The multipart/form-data body of POST /api/publish and PATCH /api/notes/:cuid (docs/api.md
// "Publish", "Update"): text fields, and one part per image whose field name is its
// filename. Every limit is enforced while reading, and each image streams into the
// object store (note.Upload) as it arrives, so no request holds more than a small
// constant in memory.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/errs"
	"github.com/sharenote/sharenote/libs/httpx"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/routes"
)

// textFields are the form fields of the multipart format (docs/api.md "Publish"); the
// values of other fields without a filename are read and dropped.
var textFields = map[string]bool{"content": true, "title": true, "summary": true, "show_properties": true,
	"expires_at": true, "properties": true, "path": true}

// readMultipart reads a multipart body: it returns the text fields and streams each
// image part into up. A text field is read up to the JSON limit, an image up to
// note.MaxImageBytes, the whole request up to the route's limit. Reading stops at the
// first image over note.MaxImagesPerPublish, before its bytes.
func readMultipart(c *gin.Context, boundary string, up *note.Upload) (map[string]string, error) {
	if boundary == "" {
		return nil, errs.New(http.StatusBadRequest, errs.InvalidBody, "The multipart body has no boundary.")
	}
	body := &tailReader{r: c.Request.Body}
	mr := multipart.NewReader(body, boundary)
	fields := map[string]string{}
	seen := map[string]bool{}
	for {
		part, err := mr.NextPart()
		if err == io.EOF { //nolint:errorlint // Only the reader's own, unwrapped EOF means "done".
			// The reader also answers a bare EOF for a body cut short; only a body that
			// really ends with the close delimiter is complete.
			if !bytes.Contains(body.tail, []byte("--"+boundary+"--")) {
				return nil, errs.New(http.StatusBadRequest, errs.InvalidBody, "The multipart body ends before its closing boundary.")
			}
			break
		}
		if err != nil {
			return nil, multipartError(err)
		}
		name := part.FormName()
		if part.FileName() != "" {
			if seen[name] {
				return nil, fmt.Errorf("%w: %s is uploaded twice", note.ErrInvalidImage, name)
			}
			seen[name] = true
			if err := readImage(c.Request.Context(), part, name, up); err != nil {
				return nil, err
			}
			continue
		}
		if !textFields[name] {
			if err := readPart(part, routes.JSONLimit, io.Discard); err != nil {
				return nil, textError(err)
			}
			continue
		}
		var buf bytes.Buffer
		if err := readPart(part, routes.JSONLimit, &buf); err != nil {
			return nil, textError(err)
		}
		if !utf8.Valid(buf.Bytes()) {
			return nil, InvalidField(fmt.Sprintf("Form field %q is not valid UTF-8.", name))
		}
		fields[name] = buf.String()
	}
	return fields, nil
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
