package obsidian

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
	"golang.org/x/text/unicode/norm"
)

// Vault is a vault folder as Obsidian and the client see it.
type Vault struct {
	Dir string
	// Notes holds every note, published or not, sorted by path.
	Notes []*Note
	// Files holds the vault-relative paths of the other files (attachments), sorted.
	Files []string
	// AttachmentFolder is attachmentFolderPath of .obsidian/app.json, cleaned, "" if unset.
	AttachmentFolder string

	byPath map[string]*Note
	all    *index // every file: what Obsidian itself resolves against
	pub    *index // published notes and every attachment: what the pages can link to
}

// Note is one Markdown file of the vault.
type Note struct {
	Path      string // vault-relative, '/'-separated, NFC as stored on disk
	Title     string // frontmatter title, else the base name without .md
	Aliases   []string
	Published bool // false when the frontmatter says publish: false
	Headings  []Heading
	Blocks    []string // block ids, without '^', in document order
	Links     []Link   // in document order, resolved
}

// Heading is one ATX heading of a note.
type Heading struct {
	Level int
	Text  string // as written, trailing #s removed
}

// Load reads the vault at dir and resolves every link of every note.
func Load(dir string) (*Vault, error) {
	v := &Vault{Dir: dir, byPath: map[string]*Note{}}
	if err := v.readConfig(); err != nil {
		return nil, err
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || d.Type()&fs.ModeSymlink != 0 && !insideRoot(dir, p) {
			return nil
		}
		if !strings.EqualFold(path.Ext(rel), ".md") {
			v.Files = append(v.Files, rel)
			return nil
		}
		return v.readNote(p, rel)
	})
	if err != nil {
		return nil, fmt.Errorf("load vault %s: %w", dir, err)
	}
	sort.Slice(v.Notes, func(i, j int) bool { return v.Notes[i].Path < v.Notes[j].Path })
	sort.Strings(v.Files)
	v.all, v.pub = newIndex(v, false), newIndex(v, true)
	for _, n := range v.Notes {
		for i := range n.Links {
			v.resolve(n, &n.Links[i])
		}
	}
	return v, nil
}

func (v *Vault) readConfig() error {
	b, err := os.ReadFile(filepath.Join(v.Dir, ".obsidian", "app.json"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var app struct {
		AttachmentFolderPath string `json:"attachmentFolderPath"`
	}
	if err := json.Unmarshal(b, &app); err != nil {
		return fmt.Errorf("read .obsidian/app.json: %w", err)
	}
	// "/" is the vault root and "./x" is relative to the note; only a plain folder inside
	// the root is a place to look a name up in.
	f := strings.Trim(path.Clean("/"+app.AttachmentFolderPath), "/")
	if !strings.HasPrefix(app.AttachmentFolderPath, "./") && f != "" && f != ".." {
		v.AttachmentFolder = f
	}
	return nil
}

func (v *Vault) readNote(file, rel string) error {
	src, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	n := ParseNote(rel, src)
	v.Notes = append(v.Notes, n)
	v.byPath[n.Path] = n
	return nil
}

// ParseNote reads one note's frontmatter, headings, block ids and links, unresolved (their
// ResolvedPath empty and HeadingIndex -1): Load resolves them against the vault.
func ParseNote(rel string, src []byte) *Note {
	rel = norm.NFC.String(rel)
	n := &Note{Path: rel, Title: strings.TrimSuffix(path.Base(rel), path.Ext(rel)), Published: true}
	scanNote(n, parseFrontmatter(n, src))
	return n
}

// parseFrontmatter fills the note's title, aliases and published flag from its YAML
// frontmatter, and returns the text after it (a frontmatter that does not parse is kept out
// of the body all the same, as Obsidian shows it as properties it cannot read).
func parseFrontmatter(n *Note, src []byte) []byte {
	src = bytes.TrimPrefix(src, []byte("\ufeff"))
	if !bytes.HasPrefix(src, []byte("---\n")) && !bytes.HasPrefix(src, []byte("---\r\n")) {
		return src
	}
	rest := src[bytes.IndexByte(src, '\n')+1:]
	end, after := -1, len(rest)
	for off := 0; off < len(rest); {
		nl := bytes.IndexByte(rest[off:], '\n')
		line := rest[off:]
		if nl >= 0 {
			line = rest[off : off+nl]
		}
		if t := strings.TrimRight(string(line), "\r \t"); t == "---" {
			end, after = off, off+len(line)
			break
		}
		if nl < 0 {
			break
		}
		off += nl + 1
	}
	if end < 0 {
		return src
	}
	var fm map[string]any
	if yaml.Unmarshal(rest[:end], &fm) == nil {
		applyFrontmatter(n, fm)
	}
	// Keep the frontmatter's lines as blank lines, so that line numbers stay true.
	blank := bytes.Repeat([]byte("\n"), bytes.Count(src[:len(src)-len(rest)+after], []byte("\n")))
	return append(blank, rest[after:]...)
}

func applyFrontmatter(n *Note, fm map[string]any) {
	if t, ok := fm["title"].(string); ok && strings.TrimSpace(t) != "" {
		n.Title = strings.TrimSpace(t)
	}
	if p, ok := fm["publish"].(bool); ok && !p {
		n.Published = false
	}
	for _, key := range []string{"aliases", "alias"} {
		switch a := fm[key].(type) {
		case string:
			for _, s := range strings.Split(a, ",") {
				if s = strings.TrimSpace(s); s != "" {
					n.Aliases = append(n.Aliases, s)
				}
			}
		case []any:
			for _, s := range a {
				if str, ok := s.(string); ok && strings.TrimSpace(str) != "" {
					n.Aliases = append(n.Aliases, strings.TrimSpace(str))
				}
			}
		}
	}
}

// insideRoot reports whether a symlink leads to a file inside the vault: the client refuses
// one that leads out (unless told to follow it), so such a note is never published.
func insideRoot(root, link string) bool {
	r, err1 := filepath.EvalSymlinks(root)
	t, err2 := filepath.EvalSymlinks(link)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(r, t)
	if fi, serr := os.Stat(t); serr != nil || fi.IsDir() {
		return false
	}
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Note returns the note at a vault-relative path, or nil.
func (v *Vault) Note(p string) *Note { return v.byPath[norm.NFC.String(p)] }

// Published returns the notes of the published set, sorted by path.
func (v *Vault) Published() []*Note {
	var out []*Note
	for _, n := range v.Notes {
		if n.Published {
			out = append(out, n)
		}
	}
	return out
}

// Links returns every link of every note, in path then document order.
func (v *Vault) Links() []Link {
	var out []Link
	for _, n := range v.Notes {
		out = append(out, n.Links...)
	}
	return out
}

// Fixture returns the absolute path of the package's test vault.
func Fixture() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "vault")
}

// CopyFixture copies the test vault into dst (typically t.TempDir()), so that a test can add
// symlinks, move or delete notes without touching the repository.
func CopyFixture(dst string) error {
	src := Fixture()
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
}
