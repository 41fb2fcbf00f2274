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
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/sharenote/sharenote/libs/note"
)

// imageRef is a reference to a local image in a note's body, by one of the forms of
// CONTRACT "Client": [[x.png]], ![[x.png]] (either with |text), ![alt](x.png).
type imageRef struct {
	// start and end delimit the text to rewrite: the whole wikilink, or the destination
	// of a Markdown image.
	start, end int
	// target is the path as written, relative to the note's folder.
	target string
	kind   refKind
	// text is a wikilink's |text, shown instead of the image's name; empty when none.
	text string
}

type refKind int

const (
	wikiLink refKind = iota
	wikiEmbed
	destination // of a Markdown image
)

// rewrite returns what the reference becomes, the image's name in CONTRACT's form
// ![alt]([[name]]) (or [text]([[name]]) for a link), which the server resolves.
func (r imageRef) rewrite(name string) string {
	if r.kind == destination {
		return "[[" + name + "]]"
	}
	text := r.text
	if text == "" {
		text = name
	}
	s := "[" + escapeLinkText(text) + "]([[" + name + "]])"
	if r.kind == wikiEmbed {
		s = "!" + s
	}
	return s
}

// imageExtensions are the extensions the server accepts: a wikilink to another file is a
// link to a note (or to something the server would not take), not an image.
var imageExtensions = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true}

// schemeOrRoot matches a destination that is not a relative path: a URL (any scheme,
// also data: and C:), a network path, an absolute path or a fragment.
var schemeOrRoot = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*:|/|\\|#)`)

// obsidianSize matches the |300 or |300x200 of an Obsidian embed, a size rather than alt text.
var obsidianSize = regexp.MustCompile(`^\d+(x\d+)?$`)

// findImageRefs returns the references to local images in a note's body, in order.
// Fenced code blocks and inline code spans are skipped: a reference shown as code is
// text, and stays as written.
func findImageRefs(body string) []imageRef {
	var refs []imageRef
	fence := ""
	for lineStart := 0; lineStart < len(body); {
		lineEnd := len(body)
		if k := strings.IndexByte(body[lineStart:], '\n'); k >= 0 {
			lineEnd = lineStart + k
		}
		trimmed := strings.TrimLeft(body[lineStart:lineEnd], " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
		default:
			refs = append(refs, lineRefs(body, lineStart, lineEnd)...)
		}
		lineStart = lineEnd + 1
	}
	return refs
}

// lineRefs finds the references in body[start:end], one line outside code blocks.
func lineRefs(body string, start, end int) []imageRef {
	var refs []imageRef
	for i := start; i < end; {
		switch {
		case body[i] == '`':
			n := len(body[i:end]) - len(strings.TrimLeft(body[i:end], "`"))
			closing := strings.Index(body[i+n:end], body[i:i+n])
			if closing < 0 {
				i += n
				continue
			}
			i += n + closing + n
		case strings.HasPrefix(body[i:end], "[[") || strings.HasPrefix(body[i:end], "![["):
			embed := body[i] == '!'
			open := i + 2
			if embed {
				open++
			}
			closing := strings.Index(body[open:end], "]]")
			if closing < 0 {
				return refs
			}
			target, text, hasText := strings.Cut(body[open:open+closing], "|")
			after := open + closing + 2
			if imageExtensions[strings.ToLower(filepath.Ext(target))] && !strings.Contains(target, "://") {
				if !hasText || (embed && obsidianSize.MatchString(text)) {
					text = ""
				}
				kind := wikiLink
				if embed {
					kind = wikiEmbed
				}
				refs = append(refs, imageRef{start: i, end: after, target: target, kind: kind, text: text})
			}
			i = after
		case strings.HasPrefix(body[i:end], "!["):
			destStart, destEnd, after, ok := markdownImage(body[:end], i)
			if !ok {
				i += 2
				continue
			}
			dest := body[destStart:destEnd]
			if d, ok := strings.CutPrefix(dest, "<"); ok {
				dest = strings.TrimSuffix(d, ">")
			} else if d, err := url.PathUnescape(dest); err == nil {
				dest = d
			}
			if dest != "" && !schemeOrRoot.MatchString(dest) {
				refs = append(refs, imageRef{start: destStart, end: destEnd, target: dest, kind: destination})
			}
			i = after
		default:
			i++
		}
	}
	return refs
}

// markdownImage parses the Markdown image ![alt](dest "title") at s[i:], and returns
// where its destination starts and ends (with its <> if any) and where it ends.
func markdownImage(s string, i int) (destStart, destEnd, after int, ok bool) {
	depth := 0
	j := i + 2
alt:
	for ; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '[':
			depth++
		case ']':
			if depth == 0 {
				break alt
			}
			depth--
		}
	}
	if j+1 >= len(s) || s[j+1] != '(' {
		return 0, 0, 0, false
	}
	destStart = j + 2
	for destStart < len(s) && s[destStart] == ' ' {
		destStart++
	}
	destEnd = destStart
	if destStart < len(s) && s[destStart] == '<' {
		k := strings.IndexByte(s[destStart:], '>')
		if k < 0 {
			return 0, 0, 0, false
		}
		destEnd = destStart + k + 1
	} else {
		parens := 0
		for ; destEnd < len(s) && s[destEnd] != ' '; destEnd++ {
			if s[destEnd] == '(' {
				parens++
			} else if s[destEnd] == ')' {
				if parens == 0 {
					break
				}
				parens--
			}
		}
	}
	k := strings.IndexByte(s[destEnd:], ')')
	if k < 0 || destEnd == destStart {
		return 0, 0, 0, false
	}
	return destStart, destEnd, destEnd + k + 1, true
}

// escapeLinkText escapes the characters that would end Markdown link text early.
func escapeLinkText(s string) string {
	return strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`).Replace(s)
}

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

// humanBytes shows a size in bytes, KiB or MiB.
func humanBytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// progress draws an upload's progress on a terminal, at most ten times a second.
type progress struct {
	w     io.Writer
	total int64
	mu    sync.Mutex
	sent  int64
	drawn time.Time
}

// reader counts what r gives toward the progress.
func (p *progress) reader(r io.Reader) io.Reader {
	if p == nil {
		return r
	}
	return readFunc(func(b []byte) (int, error) {
		n, err := r.Read(b)
		p.add(int64(n))
		return n, err
	})
}

func (p *progress) add(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent += n
	if now := time.Now(); now.Sub(p.drawn) >= 100*time.Millisecond || p.sent == p.total {
		p.drawn = now
		fmt.Fprintf(p.w, "\rUploading %s of %s (%d%%) ", humanBytes(p.sent), humanBytes(p.total), p.sent*100/max(p.total, 1))
	}
}

// done ends the progress line.
func (p *progress) done() {
	if p != nil {
		fmt.Fprintln(p.w)
	}
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(b []byte) (int, error) { return f(b) }
