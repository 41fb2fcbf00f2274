package clientcmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/note"
)

// noteFile is a note found on the command line: a file, where it lives in its vault, and
// what it held when it was read, once.
type noteFile struct {
	file    string // as found, absolute
	path    string // vault-relative, '/'-separated, NFC: the publication's path
	vault   *vault
	content string
}

// finder finds the notes of publish's arguments and the vault of each.
type finder struct {
	vaultFlag string
	follow    bool
	vaults    map[string]*vault // by root
	seen      map[string]bool   // by vault root and path
	notes     []*noteFile
	warnings  []string
	// present are the notes that are there, by vault root and match key of their path:
	// those found and those that could not be read (--prune never unshares them), not
	// those that say publish: false.
	present map[string]bool
	// folders are the folders named on the command line, with their vault and their
	// vault-relative path ("" for the root): what --prune looks at.
	folders []pruneFolder
}

// newFinder is a finder of the vault root vaultFlag ("": found for each note), which
// follows symlinks out of the vault when follow is set.
func newFinder(vaultFlag string, follow bool) *finder {
	return &finder{vaultFlag: vaultFlag, follow: follow, vaults: map[string]*vault{}, seen: map[string]bool{}, present: map[string]bool{}}
}

// close closes the vaults.
func (f *finder) close() {
	for _, v := range f.vaults {
		v.close()
	}
}

// pruneFolder is a folder of the command line, vault-relative.
type pruneFolder struct {
	vault *vault
	path  string
}

// find adds the notes an argument names: a note, or every .md under a folder except in
// hidden folders and except notes whose frontmatter says publish: false.
func (f *finder) find(arg string) error {
	abs, err := filepath.Abs(arg)
	if err != nil {
		return err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	if !st.IsDir() {
		if filepath.Ext(abs) != ".md" {
			return fmt.Errorf("%w: %s is not a note (.md) or a folder", cli.ErrUsage, arg)
		}
		v, err := f.vaultOf(abs, "")
		if err != nil {
			return err
		}
		return f.add(v, abs, false)
	}
	// A folder is where it really is, as the vault root is: named through a symlink
	// (~/notes -> ~/Dropbox/Notes), it is the folder the link leads to.
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	v, err := f.vaultOf(filepath.Join(abs, "x"), abs)
	if err != nil {
		return err
	}
	rel, err := v.rel(abs)
	if err != nil {
		return fmt.Errorf("%w: %s is not inside the vault %s", cli.ErrUsage, arg, v.root)
	}
	if rel == "." {
		rel = ""
	}
	f.folders = append(f.folders, pruneFolder{v, rel})
	return filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != abs && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || filepath.Ext(p) != ".md" {
			return nil
		}
		return f.add(v, p, true)
	})
}

// published reports whether a note's frontmatter leaves it in the published set: all but
// publish: false. A note whose frontmatter cannot be read stays in, for its error to be
// reported.
func published(content string) bool {
	props, _, err := note.SplitFrontmatter(content)
	return err != nil || props["publish"] != false
}

// add adds the note at file (absolute) of vault v, once, and reads it, once (a note of a
// folder that says publish: false is left out). One that cannot be read is a warning.
func (f *finder) add(v *vault, file string, inFolder bool) error {
	rel, err := v.rel(file)
	if errors.Is(err, errOutside) {
		return fmt.Errorf("%w: %s is not inside the vault %s", cli.ErrUsage, file, v.root)
	}
	if err != nil {
		return err
	}
	if f.seen[v.root+"\x00"+rel] {
		return nil
	}
	f.seen[v.root+"\x00"+rel] = true
	key := presentKey(v, rel)
	content, err := readNote(v, file)
	if err != nil {
		f.present[key] = true
		f.warnings = append(f.warnings, sprintf("%s: %s", rel, problem(err)))
		return nil
	}
	if inFolder && !published(content) {
		return nil
	}
	f.present[key] = true
	f.notes = append(f.notes, &noteFile{file: file, path: rel, vault: v, content: content})
	return nil
}

// presentKey is the key of a note in finder.present.
func presentKey(v *vault, rel string) string { return v.root + "\x00" + note.MatchKey(rel) }

// readNote reads a note of the vault, opened once (vault.openFile).
func readNote(v *vault, file string) (string, error) {
	fd, err := v.openFile(file)
	if err != nil {
		return "", err
	}
	defer fd.Close()
	b, err := io.ReadAll(fd)
	return string(b), err
}

// vaultOf returns the vault of the note or folder at p: --vault, else the nearest folder
// at or above p's folder holding .obsidian/, else the folder of the command line (given
// is "" for a note), else the note's folder.
func (f *finder) vaultOf(p, given string) (*vault, error) {
	root := f.vaultFlag
	if root == "" {
		root = obsidianRoot(filepath.Dir(p))
	}
	if root == "" {
		root = given
	}
	if root == "" {
		root = filepath.Dir(p)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("%w: the vault %v", cli.ErrUsage, err)
	}
	if v := f.vaults[real]; v != nil {
		return v, nil
	}
	v, warning, err := openVault(real, f.follow)
	if err != nil {
		return nil, err
	}
	if warning != "" {
		f.warnings = append(f.warnings, warning)
	}
	f.vaults[real] = v
	return v, nil
}

// obsidianRoot is the nearest folder at or above dir that holds .obsidian/, or "".
func obsidianRoot(dir string) string {
	for {
		if st, err := os.Stat(filepath.Join(dir, ".obsidian")); err == nil && st.IsDir() {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
}

// rel is the vault-relative path of p (absolute): its folder's symlinks resolved, its
// own name kept (a note that is a symlink lives where the link is). errOutside when it
// is not inside the root.
func (v *vault) rel(p string) (string, error) {
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return "", err
	}
	r, err := filepath.Rel(v.root, filepath.Join(dir, filepath.Base(p)))
	if err != nil || !isUnder(v.root, filepath.Join(v.root, r)) {
		return "", errOutside
	}
	return norm.NFC.String(filepath.ToSlash(r)), nil
}

// index lists the vault's files once: every file outside hidden folders, as its path is
// written on disk (a name may be NFD there), by the match key of its path and of its base
// name.
func (v *vault) index() error {
	v.once.Do(func() {
		v.paths, v.names = map[string]string{}, map[string][]string{}
		v.walked = filepath.WalkDir(v.root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // an unreadable folder holds nothing to find
			}
			if p != v.root && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			rel, err := filepath.Rel(v.root, p)
			if err != nil {
				return nil
			}
			rel = filepath.ToSlash(rel) // as on disk, to be opened; keyed by match key
			v.paths[note.MatchKey(rel)] = rel
			base := note.MatchKey(path.Base(rel))
			v.names[base] = append(v.names[base], rel)
			return nil
		})
	})
	return v.walked
}
