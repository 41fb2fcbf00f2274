package note

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/sharenote/sharenote/libs/cuid"
)

// UploadTimeout bounds one publish's upload, from its first image byte to its commit. A
// reservation of quota lives that long: the reaper releases an older one (its process
// died, or the upload is slower than any minimum body rate allows) and deletes the
// objects stored under it, and a publish whose reservation was released fails with
// ErrUploadExpired instead of committing.
const UploadTimeout = time.Hour

// ErrUploadExpired is a publish whose upload outlived UploadTimeout.
var ErrUploadExpired = errors.New("the upload took longer than an upload may take")

// ImageTooLargeError is an image over MaxImageBytes, refused as soon as its bytes pass it.
type ImageTooLargeError struct{ Filename string }

func (e *ImageTooLargeError) Error() string {
	return fmt.Sprintf("image %q is larger than %d bytes", e.Filename, MaxImageBytes)
}

// SourceError is a failed read of the image's source (the request body): the client's
// doing, not the store's.
type SourceError struct{ Err error }

func (e *SourceError) Error() string { return "read image: " + e.Err.Error() }

func (e *SourceError) Unwrap() error { return e.Err }

// reserveChunk is how many bytes of an image are read ahead and reserved against the
// quota at a time: a 25 MB image costs 25 reservations, and an upload holds at most this
// much of the request in memory besides what the object store buffers (blob.PutBuffer).
const reserveChunk = 1 << 20

// chunks are the read-ahead buffers of the uploads, reused from image to image.
var chunks = sync.Pool{New: func() any { b := make([]byte, reserveChunk); return &b }}

// An Upload takes the images of one publish as they arrive. Each flows from the request
// into the object store under a key of its own (<account>/<publication>/<cuid>: nothing
// the public URL does not show but a random part), its size counted and its SHA-256
// taken on the way, and every chunk of it reserved against the account's quota and image
// limit before the store sees it: however many uploads run at once, the quota is never
// exceeded. Publish commits the reservation with the publication; Abort undoes an upload
// that does not end in a publish.
type Upload struct {
	pub     *Publisher
	account string
	cuid    string // the publication's: a new one's is chosen before its images arrive
	id      string // the reservation's
	images  []StoredImage
	keys    []string // every key an object may have been stored under
	// replaces names the images whose same-named images the upload replaces (a multipart
	// PATCH): every image added so far, and the one being added. Their namesakes' bytes
	// are credited when its chunks are reserved, since committing the upload releases
	// them: the quota counts the difference. Nil for a new publication.
	replaces []string
	// reserved is set once the reservation exists; done once Publish committed it.
	reserved, done bool
}

// NewUpload starts the upload of a publish by accountCUID.
func (c *Publisher) NewUpload(accountCUID string) *Upload {
	return &Upload{pub: c, account: accountCUID, cuid: cuid.New(), id: cuid.New()}
}

// NewUploadTo starts the upload of images to the publication noteCUID (a multipart
// PATCH); Update checks that the account owns it. An image replaces the same-named one,
// and is charged against the quota for the difference of their sizes.
func (c *Publisher) NewUploadTo(accountCUID, noteCUID string) *Upload {
	return &Upload{pub: c, account: accountCUID, cuid: noteCUID, id: cuid.New(), replaces: []string{}}
}

// Add streams one image, whose media type CheckImage found, from r into the object
// store. It fails with *TooManyImagesError past MaxImagesPerPublish (before reading r),
// *ImageTooLargeError past MaxImageBytes, ErrQuotaExceeded or *TooManyImagesError when
// the account's limits refuse the bytes, *SourceError when reading r fails, and the
// store's error (blob.ErrUnavailable) when storing does. Whatever it stored stays
// recorded for Abort.
func (u *Upload) Add(ctx context.Context, filename, mediaType string, r io.Reader) error {
	if len(u.images) == MaxImagesPerPublish {
		return &TooManyImagesError{Limit: MaxImagesPerPublish}
	}
	key := u.account + "/" + u.cuid + "/" + cuid.New()
	u.keys = append(u.keys, key)
	buf := chunks.Get().(*[]byte)
	defer chunks.Put(buf)
	rr := &reservingReader{ctx: ctx, u: u, filename: filename, src: r, sum: sha256.New(), buf: (*buf)[:0]}
	_, err := u.pub.blobs.Put(ctx, key, rr, -1, mediaType)
	if rr.err != nil {
		// The request's or the quota's error says more than what the store made of it.
		return rr.err
	}
	if err != nil {
		return fmt.Errorf("store image %s: %w", filename, err)
	}
	u.images = append(u.images, StoredImage{AccountCUID: u.account, PublicationCUID: u.cuid, Filename: filename,
		MediaType: mediaType, Size: rr.n, SHA256: hex.EncodeToString(rr.sum.Sum(nil)), BlobKey: key, CreatedAt: u.pub.stamp()})
	return nil
}

// Abort undoes an upload that did not end in a publish: it deletes the objects stored
// and releases the reservation. It runs detached from ctx's cancellation (the request
// may be gone) and does nothing after Publish committed. What it cannot undo now the
// reaper does once the reservation is older than UploadTimeout.
func (u *Upload) Abort(ctx context.Context) error {
	if u.done || len(u.keys) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	err := u.pub.blobs.Delete(ctx, u.keys...)
	if err == nil {
		err = u.pub.uploads.Release(ctx, u.id)
	}
	if err == nil {
		u.done = true
	}
	return err
}

// reservingReader reads an image ahead in chunks, reserving each chunk's bytes (and, with
// the first, the image) before handing them on, and counts and hashes them.
type reservingReader struct {
	ctx      context.Context
	u        *Upload
	filename string
	src      io.Reader
	sum      hash.Hash
	buf      []byte
	off      int
	n        int64 // bytes read from src
	started  bool
	eof      bool
	err      error // why reading stopped, other than the end of the image
}

func (r *reservingReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.off == len(r.buf) {
		if r.eof {
			return 0, io.EOF
		}
		if err := r.fill(); err != nil {
			r.err = err
			return 0, err
		}
		if len(r.buf) == 0 {
			return 0, io.EOF
		}
	}
	n := copy(p, r.buf[r.off:])
	r.off += n
	return n, nil
}

// fill reads the next chunk of the image and reserves it.
func (r *reservingReader) fill() error {
	r.buf = r.buf[:cap(r.buf)]
	n, err := io.ReadFull(r.src, r.buf)
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		r.eof = true
	case err != nil:
		return &SourceError{Err: err}
	}
	r.buf, r.off = r.buf[:n], 0
	r.n += int64(n)
	if r.n > MaxImageBytes {
		return &ImageTooLargeError{Filename: r.filename}
	}
	images := 0
	u := r.u
	if !r.started {
		images = 1
		if u.replaces != nil && !slices.Contains(u.replaces, r.filename) {
			u.replaces = append(u.replaces, r.filename)
		}
	}
	if n == 0 && images == 0 {
		return nil
	}
	if err := u.pub.uploads.Reserve(r.ctx, Reservation{ID: u.id, Note: u.cuid, Account: u.account, Create: !u.reserved, Bytes: int64(n), Images: images, Replaces: u.replaces, Quota: u.pub.quota, Expires: u.pub.stamp().Add(UploadTimeout)}); err != nil {
		return err
	}
	r.started, u.reserved = true, true
	r.sum.Write(r.buf)
	return nil
}

// The image limits. Each image row costs a database row, a blob and work at every
// unpublish; these bound what one request and one account can make the service keep. A
// note worth reading rarely embeds more than a few dozen images.
const (
	// MaxImagesPerPublish bounds the images of one publish request; the parser stops
	// reading the body at the first image over it.
	MaxImagesPerPublish = 100
	// MaxImagesPerAccount bounds an account's images that count toward its storage (those
	// of active and expired publications; unpublishing releases them). It holds under
	// concurrent publishes as the byte quota does.
	MaxImagesPerAccount = 10_000
)

// ErrTooManyImages is a publish over one of the image limits; the error that wraps it is
// a *TooManyImagesError naming the limit.
var ErrTooManyImages = errors.New("too many images")

// TooManyImagesError says which image limit a publish would pass.
type TooManyImagesError struct {
	// Limit is the number of images allowed.
	Limit int
	// PerAccount is true for the account's limit, false for the limit per publish.
	PerAccount bool
}

func (e *TooManyImagesError) Error() string {
	if e.PerAccount {
		return fmt.Sprintf("too many images: an account keeps at most %d images of published notes", e.Limit)
	}
	return fmt.Sprintf("too many images: a publish carries at most %d images", e.Limit)
}

// Unwrap makes errors.Is(err, ErrTooManyImages) hold.
func (e *TooManyImagesError) Unwrap() error { return ErrTooManyImages }

// StoredImage is an image as stored: metadata plus the key of its bytes in the object
// store.
type StoredImage struct {
	AccountCUID     string
	PublicationCUID string
	Filename        string
	MediaType       string
	Size            int64
	SHA256          string
	BlobKey         string
	CreatedAt       time.Time
}
