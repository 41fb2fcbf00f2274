package clientcmd

import (
	"encoding/json"
	"errors"
	"io"
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
	// dir is the root, opened: files inside it are opened through it, so that a symlink
	// put in a path's way after it was resolved cannot lead out (os.Root).
	dir *os.Root
	// id is the vault's identity in the mapping (mapping.Vaults), set when a run loads
	// the mapping: the publications of each entry carry the id of the vault they came
	// from, and --prune only unshares those of its own vault.
	id string
	// attachments is attachmentFolderPath of .obsidian/app.json, vault-relative and
	// '/'-separated, "" when unset or not a folder inside the root.
	attachments string
	follow      bool

	once   sync.Once
	paths  map[string]string   // match key of a file's path → its path
	names  map[string][]string // match key of a base name → the paths of that name
	walked error
	// images are the files images were read from, by vault-relative path: each is
	// opened once a run, whichever notes show it.
	images map[string]*imageFile
}

// openVault opens the vault whose root is dir. A .obsidian/app.json that cannot be read
// (not a regular file, a symlink out of the vault, unreadable) is a warning, and the vault
// has no attachment folder.
func openVault(dir string, follow bool) (v *vault, warning string, err error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, "", err
	}
	if root, err = filepath.Abs(root); err != nil {
		return nil, "", err
	}
	v = &vault{root: root, follow: follow, images: map[string]*imageFile{}}
	if v.dir, err = os.OpenRoot(root); err != nil {
		return nil, "", err
	}
	f, err := v.openFile(filepath.Join(root, ".obsidian", "app.json"))
	if errors.Is(err, os.ErrNotExist) {
		return v, "", nil
	}
	if err != nil {
		return v, sprintf(".obsidian/app.json: %s", problem(err)), nil
	}
	defer f.Close()
	var app struct {
		AttachmentFolderPath string `json:"attachmentFolderPath"`
	}
	if json.NewDecoder(io.LimitReader(f, 1<<20)).Decode(&app) == nil {
		v.attachments = clampFolder(app.AttachmentFolderPath)
	}
	return v, "", nil
}

// close closes the root and the image files still open.
func (v *vault) close() {
	for _, img := range v.images {
		if img.f != nil {
			img.f.Close()
		}
	}
	v.dir.Close()
}

// image is the file rel of the vault as read for images, read on first use.
func (v *vault) image(rel string) *imageFile {
	img := v.images[rel]
	if img == nil {
		img = readImage(v, rel)
		v.images[rel] = img
	}
	return img
}

// errNotRegular is the refusal of what is not a regular file: a FIFO would hang the client,
// a device would be read without end.
var errNotRegular = errors.New("not a regular file, not read")

// openFile opens the file at p (absolute, as found in the vault) for reading. Its
// symlinks are resolved first, and unless the user follows symlinks one that leads out
// of the vault is refused (errSymlinkOut). Only a regular file is opened (errNotRegular),
// and what was opened is checked again (fstat): a FIFO or a device put in its place
// meanwhile is never read, and never waited on (openFlags). A file inside the vault is
// opened through the root: nothing put in the path's way afterwards leads out. The file
// is opened once, and read and sent from what was opened: what is sent is what was
// checked.
func (v *vault) openFile(p string) (*os.File, error) {
	real, err := v.real(p)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errNotRegular
	}
	var f *os.File
	if rel, rerr := filepath.Rel(v.root, real); rerr == nil && isUnder(v.root, real) {
		f, err = v.dir.OpenFile(rel, os.O_RDONLY|openFlags, 0)
	} else {
		f, err = os.OpenFile(real, os.O_RDONLY|openFlags, 0)
	}
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = errNotRegular
		}
		return nil, err
	}
	return f, nil
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

// real is the real path of p (absolute), its symlinks resolved, when it is inside the
// root (or the user follows symlinks); else errSymlinkOut.
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
