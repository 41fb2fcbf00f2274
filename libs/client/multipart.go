package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"path"
	"slices"
)

// Image is an image part of Publish or UpdateWithImages.
type Image struct {
	// Name is the image's filename on the server: what `[[Name]]` in the content names.
	Name string
	// ContentType is the image's media type; "" means the type of Name's extension.
	ContentType string
	// Body is read to its end, once, while the request is sent.
	Body io.Reader
}

// sendMultipart sends fields (a request type, each of its JSON fields as a form field) and
// images as one multipart/form-data request, streamed: no image is held in memory whole.
// It is never retried, as the images cannot be read twice.
func (c *Client) sendMultipart(ctx context.Context, method, path string, header http.Header, fields any, images []Image, out any) error {
	form, err := formFields(fields)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	written := make(chan error, 1)
	go func() {
		err := writeForm(mw, form, images)
		pw.CloseWithError(err)
		written <- err
	}()
	err = c.send(ctx, method, path, nil, header, pr, mw.FormDataContentType(), out)
	// The transport may return before it read the body to its end (an early answer, a
	// dropped connection): stop the writer, so that no image is read after this returns.
	pr.Close()
	if werr := <-written; werr != nil && !errors.Is(werr, io.ErrClosedPipe) {
		return fmt.Errorf("%s %s: %w", method, path, werr)
	}
	return err
}

// formFields turns a request type into form fields, by its JSON encoding, so that the
// multipart body has the same names as the JSON one: strings as they are, other values
// (booleans, the properties object) as JSON text. null has no form, and is refused.
func formFields(v any) (map[string]string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	form := make(map[string]string, len(raw))
	for name, value := range raw {
		var s string
		switch {
		case bytes.Equal(value, []byte("null")):
			return nil, fmt.Errorf("%s cannot be cleared in a multipart body", name)
		case json.Unmarshal(value, &s) == nil:
			form[name] = s
		default:
			form[name] = string(value)
		}
	}
	return form, nil
}

// writeForm writes the form fields, then each image as a file part named by its
// filename, and closes the form.
func writeForm(mw *multipart.Writer, form map[string]string, images []Image) error {
	for _, name := range slices.Sorted(maps.Keys(form)) {
		if err := mw.WriteField(name, form[name]); err != nil {
			return err
		}
	}
	for _, img := range images {
		ct := img.ContentType
		if ct == "" {
			ct = mime.TypeByExtension(path.Ext(img.Name))
		}
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", multipart.FileContentDisposition(img.Name, img.Name))
		h.Set("Content-Type", ct)
		w, err := mw.CreatePart(h)
		if err != nil {
			return err
		}
		if _, err := io.Copy(w, img.Body); err != nil {
			return fmt.Errorf("image %s: %w", img.Name, err)
		}
	}
	return mw.Close()
}
