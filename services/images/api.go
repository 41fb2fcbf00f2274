package images

import (
	"context"
	"errors"
	"io"

	"github.com/gin-gonic/gin"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/readcache"
	"github.com/sharenote/sharenote/libs/routes"
)

// api serves image bytes.
type api struct {
	images *note.Images
	public *noteapi.Public
}

// newAPI returns the API; reads are answered by public.
func newAPI(images *note.Images, public *noteapi.Public) *api {
	return &api{images: images, public: public}
}

// handlers attaches the handlers of the target to its routes; a route added to the
// target gets its line here.
func (a *api) handlers() app.Handlers {
	return app.Handlers{
		routes.ImageRead: a.Read,
	}
}

// maxHeldImage is the largest image whose bytes the read cache holds; a larger one is
// streamed from the object store on every read (its entry holds the validator).
const maxHeldImage = 1 << 20

// Read returns an image of an active publication with its stored media type, from the
// read cache or with one query and the object store, with Range support. Its validator
// is the image's SHA-256, which no edit of the note changes.
func (a *api) Read(c *gin.Context) {
	user, noteID, name := c.Param("userCuid"), c.Param("noteCuid"), c.Param("filename")
	if !cuid.Valid(user) || !cuid.Valid(noteID) || !note.ValidFilename(name) {
		noteapi.NotFoundJSON(c)
		return
	}
	load := func(ctx context.Context, _ *readcache.Entry) (*readcache.Entry, error) {
		return a.load(ctx, user, noteID, name)
	}
	a.public.Serve(c, noteapi.Read{Route: routes.ImageRead, ID: user + "/" + noteID + "/" + name, NotFound: noteapi.NotFoundJSON,
		Ranges: true, Load: load})
}

// load builds the cache entry of the image name of note noteID of account user: its
// bytes when it is small enough to hold, else how to stream them; a negative entry when
// the image or its note is not there.
func (a *api) load(ctx context.Context, user, noteID, name string) (*readcache.Entry, error) {
	iv, err := a.images.ReadImage(ctx, user, noteID, name)
	if errors.Is(err, note.ErrNotFound) {
		return noteapi.Missing(noteID), nil
	}
	if err != nil {
		return nil, err
	}
	img := iv.Image
	e := noteapi.Entry(iv.Note, `"`+img.SHA256[:32]+`"`, img.MediaType, nil)
	if img.Size > maxHeldImage {
		e.Size = img.Size
		e.Open = func(ctx context.Context, off, n int64) (io.ReadCloser, error) {
			return a.images.OpenImage(ctx, img, off, n)
		}
		return e, nil
	}
	rc, err := a.images.OpenImage(ctx, img, 0, -1)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if e.Body, err = io.ReadAll(io.LimitReader(rc, img.Size)); err != nil {
		return nil, err
	}
	return e, nil
}
