package obsidian

import (
	"path"
	"strings"
)

// ImageExts are the file extensions the API accepts as images (docs/api.md "Publish"),
// and SVG, which the client sends rasterized.
var ImageExts = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true, ".svg": true}

// IsImage reports whether a file name has an image extension.
func IsImage(name string) bool { return ImageExts[strings.ToLower(path.Ext(name))] }

// Figures counts a vault's notes and links.
type Figures struct {
	Notes, Published, Files int
	Links                   int // every link and embed
	Resolved                int // those Obsidian resolves (to a note or a file)
	ToNotes                 int // resolved to a note (embeds included)
	ByRule                  map[Rule]int
	Fragments               int // links to a note with a fragment
	FragmentsFound          int // of those, the ones whose heading or block exists
	ImageEmbeds             int // embeds of a name with an image extension
	ImagesResolved          int // of those, the ones that name a file of the vault
	Unresolved              []Link
}

// Figures counts the vault's notes and links.
func (v *Vault) Figures() Figures {
	f := Figures{Notes: len(v.Notes), Published: len(v.Published()), Files: len(v.Files), ByRule: map[Rule]int{}}
	for _, l := range v.Links() {
		f.Links++
		if l.Embed && IsImage(l.Target) {
			f.ImageEmbeds++
			if l.Resolved() {
				f.ImagesResolved++
			}
		}
		if !l.Resolved() {
			f.Unresolved = append(f.Unresolved, l)
			continue
		}
		f.Resolved++
		f.ByRule[l.Rule]++
		if l.Attachment {
			continue
		}
		f.ToNotes++
		if l.Fragment != "" {
			f.Fragments++
			if l.FragmentFound() {
				f.FragmentsFound++
			}
		}
	}
	return f
}
