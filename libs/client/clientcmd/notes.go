package clientcmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/note"
)

// noteFile is a note found on the command line: a file, and where it lives in its vault.
type noteFile struct {
	file  string // as found, absolute
	path  string // vault-relative, '/'-separated, NFC: the publication's path
	vault *vault
}

// finder finds the notes of publish's arguments and the vault of each.
type finder struct {
	vaultFlag string
	follow    bool
	vaults    map[string]*vault // by root
	seen      map[string]bool   // by vault root and path
	notes     []*noteFile
	warnings  []string
	// folders are the folders named on the command line, with their vault and their
	// vault-relative path ("" for the root): what --prune looks at.
	folders []pruneFolder
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
		return f.add(v, abs)
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
		if !published(p) {
			return nil
		}
		return f.add(v, p)
	})
}

// published reports whether a note's frontmatter leaves it in the published set: all but
// publish: false. A note that cannot be read stays in, for its error to be reported.
func published(file string) bool {
	b, err := os.ReadFile(file)
	if err != nil {
		return true
	}
	props, _, err := note.SplitFrontmatter(string(b))
	return err != nil || props["publish"] != false
}

// add adds the note at file (absolute) of vault v, once.
func (f *finder) add(v *vault, file string) error {
	rel, err := v.rel(file)
	if errors.Is(err, errOutside) {
		return fmt.Errorf("%w: %s is not inside the vault %s", cli.ErrUsage, file, v.root)
	}
	if err != nil {
		return err
	}
	if _, err := v.real(file); err != nil {
		f.warnings = append(f.warnings, fmt.Sprintf("%s: %s", rel, problem(err)))
		return nil
	}
	key := v.root + "\x00" + rel
	if !f.seen[key] {
		f.seen[key] = true
		f.notes = append(f.notes, &noteFile{file: file, path: rel, vault: v})
	}
	return nil
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
	v, err := openVault(real, f.follow)
	if err != nil {
		return nil, err
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
