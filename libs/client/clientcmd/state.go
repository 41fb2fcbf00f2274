package clientcmd

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/sharenote/sharenote/libs/cli"
	"github.com/sharenote/sharenote/libs/note"
)

// publishedFile is the state of a note's last publish or update from this machine: what
// the server holds, so that the next publish sends only what changed.
type publishedFile struct {
	Cuid          string `json:"cuid"`
	URL           string `json:"url"`
	ETag          string `json:"etag"`
	ContentSHA256 string `json:"content_sha256"`
	TitleSHA256   string `json:"title_sha256"`
	PathSHA256    string `json:"path_sha256"`
	// NoPath: a copy published with --new, which leaves the path to the publication that
	// holds it.
	NoPath bool `json:"no_path,omitempty"`
	// Images are the images the publication holds, by name.
	Images map[string]publishedImage `json:"images"`
	// Vault is the id of the vault it was last published from (mapping.Vaults); "" in an
	// entry written before vaults had identities, which --prune never unshares.
	Vault string `json:"vault,omitempty"`
}

type publishedImage struct {
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// mapping is what the client published, kept beside the token: server → account (user
// cuid) → vault-relative path → state; and the identity of each vault it published from.
type mapping struct {
	Servers map[string]map[string]map[string]*publishedFile `json:"servers"`
	// Vaults are the vaults' ids by their root (absolute, symlinks resolved): random, made
	// when a vault is first met. Each entry names the vault it came from, so that --prune
	// knows what this vault published, and that a folder now in another vault than the
	// one its entries came from (a vault root that moved) is seen.
	Vaults map[string]string `json:"vaults,omitempty"`
}

// vaultID is the id of the vault at root, made when it has none.
func (m *mapping) vaultID(root string) string {
	if id := m.Vaults[root]; id != "" {
		return id
	}
	b := make([]byte, 12)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	id := hex.EncodeToString(b)
	if m.Vaults == nil {
		m.Vaults = map[string]string{}
	}
	m.Vaults[root] = id
	return id
}

// vaultRoot is the root of the vault of id, "" when unknown.
func (m *mapping) vaultRoot(id string) string {
	for root, v := range m.Vaults {
		if v == id {
			return root
		}
	}
	return ""
}

// mappingName is the mapping's file in the client's folder.
const mappingName = "publications.json"

// legacyName is the mapping of the client before notes had vault paths: server →
// absolute file path → state. A note found there and not in the mapping updates that
// publication (and gives it its path) instead of publishing a second copy.
const legacyName = "published.json"

type legacyMapping struct {
	Servers map[string]map[string]*publishedFile `json:"servers"`
}

// loadLegacy reads the old mapping of one server; nil when there is none or it cannot be
// read (it is only a hint).
func loadLegacy(env cli.Env, server string) map[string]*publishedFile {
	var l legacyMapping
	if readPrivate(env.Getenv, legacyName, &l) != nil {
		return nil
	}
	return l.Servers[server]
}

// loadMapping reads the mapping; a missing file is an empty one.
func loadMapping(env cli.Env) (*mapping, error) {
	m := &mapping{}
	if err := readPrivate(env.Getenv, mappingName, m); err != nil {
		return nil, err
	}
	if m.Servers == nil {
		m.Servers = map[string]map[string]map[string]*publishedFile{}
	}
	return m, nil
}

// notes returns the states of one account on one server, made when missing.
func (m *mapping) notes(server, account string) map[string]*publishedFile {
	if m.Servers[server] == nil {
		m.Servers[server] = map[string]map[string]*publishedFile{}
	}
	if m.Servers[server][account] == nil {
		m.Servers[server][account] = map[string]*publishedFile{}
	}
	return m.Servers[server][account]
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// change is what an update in place sends: the fields that differ from the state, and the
// images that are new or changed.
type change struct {
	content, title, path bool
	images               []*localImage
	replaced             int64 // bytes of the images they replace
}

func (c change) none() bool { return !c.content && !c.title && !c.path && len(c.images) == 0 }

// diff compares a prepared note with the state of its publication.
func diff(prev *publishedFile, p *prepared) change {
	c := change{
		content: prev.ContentSHA256 != hashOf(p.content),
		title:   prev.TitleSHA256 != hashOf(p.title),
		path:    !prev.NoPath && prev.PathSHA256 != hashOf(p.path),
	}
	for _, img := range p.images {
		old, had := prev.Images[img.name]
		if had && old.SHA256 == img.sha256 {
			continue
		}
		c.images = append(c.images, img)
		c.replaced += old.Bytes
	}
	return c
}

// after is the state once the publication holds p.
func after(prev *publishedFile, p *prepared, cuid, url, etag string) *publishedFile {
	s := &publishedFile{Cuid: cuid, URL: url, ETag: etag, ContentSHA256: hashOf(p.content), TitleSHA256: hashOf(p.title),
		PathSHA256: hashOf(p.path), Images: map[string]publishedImage{}, Vault: p.vault.id}
	if prev != nil {
		maps.Copy(s.Images, prev.Images)
		s.NoPath = prev.NoPath
	}
	for _, img := range p.images {
		s.Images[img.name] = publishedImage{img.sha256, img.size}
	}
	return s
}

// under reports whether the vault path p lies in folder ("" for the root).
func under(folder, p string) bool {
	return folder == "" || strings.HasPrefix(note.MatchKey(p), note.MatchKey(folder)+"/")
}

// sortedPaths are the keys of a state map in order.
func sortedPaths(m map[string]*publishedFile) []string {
	return slices.Sorted(maps.Keys(m))
}

// title is the title a note is sent with: its file name without .md.
func fileTitle(p string) string { return strings.TrimSuffix(path.Base(p), path.Ext(p)) }
