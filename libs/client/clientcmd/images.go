package clientcmd

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/sharenote/sharenote/libs/note"
)

// localImage is a file of the vault that a note shows, as it is sent.
type localImage struct {
	rel string // vault-relative path of the file it comes from
	// name is the image's filename on the server: the file's base name (an SVG's with
	// .png added), made unique when two files share one.
	name        string
	contentType string
	*imageFile
}

// imageFile is a file of the vault as it was read for the images that show it: opened
// once, and kept open until it is sent, so that what is sent is what was checked.
type imageFile struct {
	f      *os.File // nil for an SVG, whose PNG is held
	size   int64
	sha256 string
	head   []byte // the first bytes, which the server's check reads
	// png is an SVG's rasterization, sent instead of the file; nil for other images.
	png []byte
	// width is an SVG's own width, set as the size of references that give none.
	width int
	err   error
}

// body returns the bytes to send: those of the file that was opened and checked, read
// by offset (several notes may send one file), and only while they are still the bytes
// that were checked: a file changed in place since fails the request rather than send
// what was not checked.
func (img *localImage) body() io.ReadCloser {
	if img.png != nil {
		return io.NopCloser(bytes.NewReader(img.png))
	}
	return io.NopCloser(&checkedReader{r: io.NewSectionReader(img.f, 0, img.size), h: sha256.New(), want: img.sha256})
}

// checkedReader reads a file's bytes and, at their end, fails unless they hash to want.
type checkedReader struct {
	r    io.Reader
	h    hash.Hash
	want string
}

func (c *checkedReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.h.Write(b[:n])
	if err == io.EOF && hex.EncodeToString(c.h.Sum(nil)) != c.want {
		return n, errors.New("the file changed since it was read, not sent")
	}
	return n, err
}

// svgExt and the server's image extensions are the files a publish sends.
const svgExt = ".svg"

// isImageTarget reports whether a reference names an image publish sends, by extension.
func isImageTarget(target string) bool {
	switch strings.ToLower(path.Ext(target)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp", svgExt:
		return true
	}
	return false
}

// loadImage makes the image of the vault's file rel (found for a reference) that is sent
// under name, after the server's checks: inside the vault, at most note.MaxImageBytes,
// its extension and signature agree; an SVG is rasterized. The file is read once a run,
// whichever notes show it (vault.image).
func loadImage(v *vault, rel, name string) (*localImage, error) {
	file := v.image(rel)
	if file.err != nil {
		return nil, file.err
	}
	img := &localImage{rel: rel, name: name, imageFile: file, contentType: "image/png"}
	if file.png != nil {
		return img, nil
	}
	img.contentType = mime.TypeByExtension(path.Ext(name))
	if _, err := note.CheckImage(name, img.contentType, file.head); err != nil {
		return nil, err
	}
	return img, nil
}

// readImage opens the vault's file rel once, checks that it is a regular file of at most
// note.MaxImageBytes, and hashes it (an SVG: rasterizes it and closes it); the file stays
// open for the send.
func readImage(v *vault, rel string) *imageFile {
	img := &imageFile{}
	f, err := v.openFile(filepath.Join(v.root, filepath.FromSlash(rel)))
	if err != nil {
		img.err = err
		return img
	}
	if img.err = img.read(f, strings.EqualFold(path.Ext(rel), svgExt)); img.err != nil || img.png != nil {
		f.Close()
		return img
	}
	img.f = f
	return img
}

func (img *imageFile) read(f *os.File, svg bool) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if img.size = st.Size(); img.size > note.MaxImageBytes {
		return fmt.Errorf("%d bytes, over the limit of %d bytes (%s) an image", img.size, note.MaxImageBytes, humanBytes(note.MaxImageBytes))
	}
	if svg {
		return img.rasterize(f)
	}
	h := sha256.New()
	n, err := io.Copy(h, io.TeeReader(io.LimitReader(f, img.size), headWriter{img}))
	if err != nil {
		return err
	}
	if n != img.size {
		return errors.New("the file changed while it was read, not sent")
	}
	img.sha256 = hex.EncodeToString(h.Sum(nil))
	return nil
}

// headWriter keeps the first 16 bytes written to it as the image's head.
type headWriter struct{ img *imageFile }

func (w headWriter) Write(b []byte) (int, error) {
	if need := 16 - len(w.img.head); need > 0 {
		w.img.head = append(w.img.head, b[:min(need, len(b))]...)
	}
	return len(b), nil
}

// rasterize turns the SVG in f into the PNG to send.
func (img *imageFile) rasterize(f io.Reader) error {
	src, err := io.ReadAll(io.LimitReader(f, note.MaxImageBytes))
	if err != nil {
		return err
	}
	png, width, err := rasterizeSVG(src)
	if err != nil {
		return fmt.Errorf("cannot be converted to PNG: %w", err)
	}
	sum := sha256.Sum256(png)
	img.png, img.width, img.size = png, width, int64(len(png))
	img.sha256 = hex.EncodeToString(sum[:])
	return nil
}

// serverName is the name a file is sent under: its base name (an SVG's with .png
// added), without the characters a [[link]] cannot hold, made unique among taken.
func serverName(rel string, taken map[string]bool) string {
	base := strings.Map(func(r rune) rune {
		if strings.ContainsRune("[]|#^\\/", r) {
			return '_'
		}
		return r
	}, path.Base(rel))
	if strings.EqualFold(path.Ext(base), svgExt) {
		base += ".png"
	}
	return uniqueName(base, taken)
}

// uniqueName returns base, or base with -2, -3… before its extension when another file
// took it, and marks the result taken.
func uniqueName(base string, taken map[string]bool) string {
	name := base
	ext := path.Ext(base)
	for n := 2; taken[name]; n++ {
		name = fmt.Sprintf("%s-%d%s", strings.TrimSuffix(base, ext), n, ext)
	}
	taken[name] = true
	return name
}
