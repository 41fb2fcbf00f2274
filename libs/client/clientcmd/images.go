package clientcmd

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path"
	"strings"

	"github.com/sharenote/sharenote/libs/note"
)

// localImage is a file of the vault that a note shows, as it is sent.
type localImage struct {
	rel  string // vault-relative path of the file it comes from
	file string // its real path, symlinks resolved
	// name is the image's filename on the server: the file's base name (an SVG's with
	// .png added), made unique when two files share one.
	name        string
	contentType string
	size        int64
	sha256      string
	// png is an SVG's rasterization, sent instead of the file; nil for other images.
	png []byte
	// width is an SVG's own width, set as the size of references that give none.
	width int
}

// body returns the bytes to send.
func (img *localImage) body() (io.ReadCloser, error) {
	if img.png != nil {
		return io.NopCloser(bytes.NewReader(img.png)), nil
	}
	return os.Open(img.file)
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

// loadImage reads the vault's file rel (found for a reference) and applies the server's
// checks before anything is sent: inside the vault, at most note.MaxImageBytes, its
// extension and signature agree; an SVG is rasterized. name is its name on the server.
func loadImage(v *vault, rel, name string) (*localImage, error) {
	real, err := v.open(rel)
	if err != nil {
		return nil, err
	}
	img := &localImage{rel: rel, file: real, name: name}
	f, err := os.Open(real)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a file")
	}
	if img.size = st.Size(); img.size > note.MaxImageBytes {
		return nil, fmt.Errorf("%d bytes, over the limit of %d bytes (%s) an image", img.size, note.MaxImageBytes, humanBytes(note.MaxImageBytes))
	}
	if strings.EqualFold(path.Ext(rel), svgExt) {
		return img, img.rasterize(f)
	}
	img.contentType = mime.TypeByExtension(path.Ext(name))
	head := make([]byte, 16)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if _, err := note.CheckImage(name, img.contentType, head[:n]); err != nil {
		return nil, err
	}
	h := sha256.New()
	h.Write(head[:n])
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	img.sha256 = hex.EncodeToString(h.Sum(nil))
	return img, nil
}

// rasterize turns the SVG in f into the PNG to send.
func (img *localImage) rasterize(f io.Reader) error {
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
	img.contentType, img.sha256 = "image/png", hex.EncodeToString(sum[:])
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
