package clientcmd

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/sharenote/sharenote/libs/note"
)

// localImage is an image file a note references.
type localImage struct {
	path string // absolute; once checked, with its symlinks resolved
	// name is the image's filename on the server: the file's base name, made unique when
	// two files share one.
	name        string
	contentType string
	size        int64
	sha256      string
}

// prepared is a note made ready to send: its content with the image references
// rewritten, and the images they name.
type prepared struct {
	content string
	images  []*localImage
}

// prepare reads the note at path (absolute), finds and checks the images it references
// and rewrites the references to their names. Every problem a person must fix before
// anything is sent is reported together, one a line.
func prepare(path string) (*prepared, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	content := string(raw)
	// The server parses the frontmatter the same way; references count in the body only.
	_, body, err := note.SplitFrontmatter(content)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	head := content[:len(content)-len(body)]

	p := &prepared{}
	byPath := map[string]*localImage{}
	taken := map[string]bool{}
	var problems []string
	var b strings.Builder
	copied := 0
	// Only files in the note's folder are sent: a note may come from someone else, and
	// must not publish the reader's other files.
	root := filepath.Dir(path)
	for _, ref := range findImageRefs(body) {
		file := filepath.Join(root, filepath.FromSlash(ref.target))
		img := byPath[file]
		if img == nil {
			img = &localImage{path: file, name: uniqueName(filepath.Base(file), taken)}
			if err := img.check(root); err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", ref.target, err))
			}
			byPath[file] = img
			p.images = append(p.images, img)
		}
		b.WriteString(body[copied:ref.start])
		b.WriteString(ref.rewrite(img.name))
		copied = ref.end
	}
	b.WriteString(body[copied:])
	if len(p.images) > note.MaxImagesPerPublish {
		problems = append(problems, fmt.Sprintf("the note references %d images; a publish carries at most %d", len(p.images), note.MaxImagesPerPublish))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s: nothing was sent:\n  %s", path, strings.Join(problems, "\n  "))
	}
	p.content = head + b.String()
	return p, nil
}

// uniqueName returns base, or base with -2, -3… before its extension when another file
// took it, and marks the result taken.
func uniqueName(base string, taken map[string]bool) string {
	name := base
	ext := filepath.Ext(base)
	for n := 2; taken[name]; n++ {
		name = fmt.Sprintf("%s-%d%s", strings.TrimSuffix(base, ext), n, ext)
	}
	taken[name] = true
	return name
}

// check applies the server's checks to the file before anything is sent (it is inside
// root, exists, is at most note.MaxImageBytes, its name, extension and signature agree)
// and hashes it, reading it once and holding only its first bytes. img.path becomes the
// file's real path, with its symlinks resolved, which is what is sent.
func (img *localImage) check(root string) error {
	resolved, err := insideRoot(root, img.path)
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("no such file")
	}
	if err != nil {
		return err
	}
	img.path = resolved
	f, err := os.Open(img.path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return errors.New("not a file")
	}
	if img.size = st.Size(); img.size > note.MaxImageBytes {
		return fmt.Errorf("%d bytes, over the limit of %d bytes (%s) an image", img.size, note.MaxImageBytes, humanBytes(note.MaxImageBytes))
	}
	if strings.Contains(img.name, "]]") || strings.Contains(img.name, "|") {
		return fmt.Errorf("%q cannot be named in a [[link]]: rename the file", img.name)
	}
	img.contentType = mime.TypeByExtension(filepath.Ext(img.name))
	head := make([]byte, 16)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return err
	}
	if _, err := note.CheckImage(img.name, img.contentType, head[:n]); err != nil {
		return err
	}
	h := sha256.New()
	h.Write(head[:n])
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	img.sha256 = hex.EncodeToString(h.Sum(nil))
	return nil
}

// errOutside is the problem of a file that is not inside the folder files are sent from.
var errOutside = errors.New("outside the note's folder (only files in it or below are sent)")

// insideRoot returns the real path of path (every symlink resolved) when the file is in
// the folder root or below, both absolute; else errOutside, or the error of a file that
// cannot be resolved (os.ErrNotExist when it is missing). It is the one rule of what a
// publish may read. root's own symlinks are resolved too, so that a folder reached
// through a symlink works. The part of path below root is judged also after decoding its
// percent-escapes, again and again (a Markdown destination is decoded once already), so
// that no spelling of ../ slips through: a name that would leave root once decoded is
// refused even if a file of that very name exists inside.
func insideRoot(root, path string) (string, error) {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return "", errOutside
	}
	for {
		if !isUnder(root, filepath.Join(root, rel)) {
			return "", errOutside
		}
		decoded, err := url.PathUnescape(rel)
		if err != nil || decoded == rel {
			break
		}
		rel = filepath.FromSlash(decoded)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	if !isUnder(realRoot, resolved) {
		return "", errOutside
	}
	return resolved, nil
}

// isUnder reports whether path is dir or lies below it, by their names alone.
func isUnder(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && !filepath.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
