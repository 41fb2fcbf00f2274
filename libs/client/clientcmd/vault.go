package clientcmd

import (
	"encoding/json"
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/text/unicode/norm"

	"github.com/sharenote/sharenote/libs/note"
)

// vault is the folder notes are published from: their paths are relative to its root,
// and no file outside it is ever read (unless the user follows symlinks out of it).
type vault struct {
	root string // absolute, its symlinks resolved
	// attachments is attachmentFolderPath of .obsidian/app.json, vault-relative and
	// '/'-separated, "" when unset or not a folder inside the root.
	attachments string
	follow      bool

	once   sync.Once
	paths  map[string]string   // match key of a file's path → its path
	names  map[string][]string // match key of a base name → the paths of that name
	walked error
}

// openVault opens the vault whose root is dir.
func openVault(dir string, follow bool) (*vault, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	if root, err = filepath.Abs(root); err != nil {
		return nil, err
	}
	v := &vault{root: root, follow: follow}
	b, err := os.ReadFile(filepath.Join(root, ".obsidian", "app.json"))
	if errors.Is(err, os.ErrNotExist) {
		return v, nil
	}
	if err != nil {
		return nil, err
	}
	var app struct {
		AttachmentFolderPath string `json:"attachmentFolderPath"`
	}
	if json.Unmarshal(b, &app) == nil {
		v.attachments = clampFolder(app.AttachmentFolderPath)
	}
	return v, nil
}

// clampFolder is attachmentFolderPath as a folder inside the root: "/" (the root) and
// "./x" (beside each note) name no one folder to look in, and ".." can never lead out.
func clampFolder(p string) string {
	if strings.HasPrefix(p, "./") {
		return ""
	}
	f := strings.Trim(path.Clean("/"+strings.ReplaceAll(p, `\`, "/")), "/")
	return norm.NFC.String(f)
}

// errOutside is the refusal of a file that is not inside the vault's root.
var errOutside = errors.New("outside the vault, not sent")

// errSymlinkOut is the refusal of a symlink that leads out of the vault.
var errSymlinkOut = errors.New("a symlink that leads out of the vault, not sent (--follow-symlinks sends it)")

// find resolves an attachment's target, as written in the note at from (vault-relative),
// to a vault-relative path as written on disk, as Obsidian does: a path from the note's folder, from the
// root, from the attachment folder; then, for a bare name, the file of that base name in
// the note's folder, else the shortest path, else the smallest in byte order. Names
// compare by match key. errOutside when the target leads up out of the root;
// os.ErrNotExist when nothing matches.
func (v *vault) find(from, target string) (string, error) {
	t := strings.TrimSpace(strings.ReplaceAll(target, `\`, "/"))
	if t == "" {
		return "", os.ErrNotExist
	}
	dir := path.Dir(from)
	tries := []string{path.Join(dir, t), path.Clean("/" + t)[1:]}
	if v.attachments != "" {
		tries = append(tries, path.Join(v.attachments, t))
	}
	if strings.HasPrefix(t, "../") {
		tries = tries[:1] // a path up from the note's folder is that path only
	}
	for _, p := range tries {
		if p == ".." || strings.HasPrefix(p, "../") {
			return "", errOutside
		}
		if st, err := os.Stat(filepath.Join(v.root, filepath.FromSlash(p))); err == nil && !st.IsDir() {
			return p, nil
		}
		if err := v.index(); err != nil {
			return "", err
		}
		if hit, ok := v.paths[note.MatchKey(p)]; ok {
			return hit, nil
		}
	}
	if strings.Contains(t, "/") {
		return "", os.ErrNotExist
	}
	if hit := nearest(v.names[note.MatchKey(t)], dir); hit != "" {
		return hit, nil
	}
	return "", os.ErrNotExist
}

// nearest picks among candidates the one in dir, then the shortest path, then the
// smallest in byte order (docs/api.md "Vaults and links", rule 2).
func nearest(cands []string, dir string) string {
	if len(cands) == 0 {
		return ""
	}
	return slices.MinFunc(cands, func(a, b string) int {
		ina, inb := path.Dir(a) == dir, path.Dir(b) == dir
		switch {
		case ina != inb && ina:
			return -1
		case ina != inb:
			return 1
		case len(a) != len(b):
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	})
}

// open returns the real path of the vault's file rel (as on disk), with its symlinks
// resolved, when it is inside the root (or the user follows symlinks); else errSymlinkOut.
func (v *vault) open(rel string) (string, error) {
	return v.real(filepath.Join(v.root, filepath.FromSlash(rel)))
}

// real is open for an absolute path.
func (v *vault) real(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	if !v.follow && !isUnder(v.root, real) {
		return "", errSymlinkOut
	}
	return real, nil
}

// isUnder reports whether path is dir or lies below it, by their names alone.
func isUnder(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && !filepath.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
