package publish

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// checkSpoolDir reports whether image parts can be spooled to dir: it creates and removes
// a file there.
func checkSpoolDir(dir string) error {
	f, err := os.CreateTemp(dir, "sharenote-spool-check-*")
	if err != nil {
		return err
	}
	name := f.Name()
	return errors.Join(f.Close(), os.Remove(name))
}

// spool keeps the image parts of one request in one temporary file while the body is
// read, so that the request holds at most one image in memory at a time: the parser
// streams each part to the file, and the store reads the images back one by one when it
// writes them. The file is removed when the request ends.
type spool struct {
	dir string
	f   *os.File
	w   *bufio.Writer
	buf []byte // The copy buffer, reused for every part.
	end int64
}

// spooled is where one image lies in the spool, and what it is.
type spooled struct {
	off, size int64
	sha256    string
}

// spoolWriteBuffer batches the multipart reader's small reads (at most 4 KiB each) into
// fewer writes to the file.
const spoolWriteBuffer = 64 << 10

// add streams head and then the rest of r to the spool, at most limit bytes in all
// (errPartTooLarge beyond that), and returns where they lie. A failed read of r is
// returned as it is, a failed write of the file wrapped in errSpool.
func (s *spool) add(head []byte, r io.Reader, limit int64) (spooled, error) {
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, "sharenote-upload-*")
		if err != nil {
			return spooled{}, fmt.Errorf("%w: %v", errSpool, err)
		}
		s.f, s.w, s.buf = f, bufio.NewWriterSize(f, spoolWriteBuffer), make([]byte, 32<<10)
	}
	h := sha256.New()
	out := &countingWriter{w: io.MultiWriter(s.w, h)}
	if _, err := out.Write(head); err != nil {
		return spooled{}, fmt.Errorf("%w: %v", errSpool, err)
	}
	// Copy through out, not ReadFrom: a write error must stay distinguishable from a
	// read error, so the reader is wrapped to tag its errors.
	src := &taggedReader{r: io.LimitReader(r, limit+1-int64(len(head)))}
	if _, err := io.CopyBuffer(out, src, s.buf); err != nil {
		if src.err != nil {
			return spooled{}, src.err
		}
		return spooled{}, fmt.Errorf("%w: %v", errSpool, err)
	}
	if out.n > limit {
		return spooled{}, errPartTooLarge
	}
	if err := s.w.Flush(); err != nil {
		return spooled{}, fmt.Errorf("%w: %v", errSpool, err)
	}
	img := spooled{off: s.end, size: out.n, sha256: hex.EncodeToString(h.Sum(nil))}
	s.end += out.n
	return img, nil
}

// load returns the note.Image loader of img: it appends img's bytes, read back from the
// file, to buf.
func (s *spool) load(img spooled) func(buf []byte) ([]byte, error) {
	return func(buf []byte) ([]byte, error) {
		start := len(buf)
		buf = slices.Grow(buf, int(img.size))[:start+int(img.size)]
		if _, err := s.f.ReadAt(buf[start:], img.off); err != nil {
			return nil, fmt.Errorf("read spooled image: %w", err)
		}
		return buf, nil
	}
}

// close removes the file.
func (s *spool) close() {
	if s.f != nil {
		_ = s.f.Close()
		_ = os.Remove(s.f.Name())
	}
}

// errSpool is a failure to write the spool file: the service's disk, not the client.
var errSpool = errors.New("spool image")

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// taggedReader remembers the error its reader returned, other than io.EOF.
type taggedReader struct {
	r   io.Reader
	err error
}

func (t *taggedReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF { //nolint:errorlint // io.EOF is returned unwrapped by contract.
		t.err = err
	}
	return n, err
}
