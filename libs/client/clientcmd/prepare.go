package clientcmd

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/render"
)

// prepared is a note made ready to send: its content with the image references
// rewritten to the server's form, the images they name, and what could not be sent.
type prepared struct {
	*noteFile
	content string
	// title is the frontmatter's title, else the file name without .md: sent always, so
	// that a title removed from the frontmatter falls back to the file name.
	title string
	// names are what links of other notes may match it by (path, base name, aliases).
	names    []note.Name
	images   []*localImage
	warnings []string // one line each: a file not found, not read or not converted
	// unsent are the targets of those files, of which the server's unresolved_reference
	// would only say again what the client said.
	unsent map[string]bool
}

// prepare reads a note, finds the images it shows (by render.References, the scanner the
// server uses: nothing in code, math or comments) and rewrites their references to the
// names they are sent under. A file that cannot be found, read or converted is a warning,
// and its reference stays as written: the note is published without it.
func prepare(n *noteFile) (*prepared, error) {
	content := n.content
	props, body, err := note.SplitFrontmatter(content)
	if err != nil {
		return nil, err
	}
	p := &prepared{noteFile: n, unsent: map[string]bool{}}
	p.title = fileTitle(n.path)
	if t, ok := props["title"].(string); ok && strings.TrimSpace(t) != "" {
		p.title = strings.TrimSpace(t)
	}
	p.names = note.Text{Path: &n.path, Properties: props}.Names()
	head := content[:len(content)-len(body)]
	p.content = head + p.rewrite(body)
	if len(p.images) > note.MaxImagesPerPublish {
		for _, img := range p.images[note.MaxImagesPerPublish:] {
			p.warn(img.rel, fmt.Sprintf("over the %d images a publish carries, not sent", note.MaxImagesPerPublish))
		}
		p.images = p.images[:note.MaxImagesPerPublish]
	}
	return p, nil
}

func (p *prepared) warn(ref, problem string) {
	p.warnings = append(p.warnings, sprintf("%s: %s: %s", p.path, ref, problem))
}

// edit replaces body[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// rewrite returns body with each reference to an image it could load in the server's
// form, loading the images once each.
func (p *prepared) rewrite(body string) string {
	byRel := map[string]*localImage{}
	failed := p.unsent
	taken := map[string]bool{}
	var edits []edit
	for _, r := range render.References(body) {
		target, ok := imageTarget(r)
		if !ok || failed[target] {
			continue
		}
		rel, err := p.vault.find(p.path, target)
		img := byRel[rel]
		if err == nil && img == nil {
			img, err = loadImage(p.vault, rel, serverName(rel, taken))
			if err == nil {
				byRel[rel] = img
				p.images = append(p.images, img)
			}
		}
		if err != nil {
			failed[target] = true
			p.warn(target, problem(err))
			continue
		}
		edits = append(edits, imageEdits(r, img)...)
	}
	return applyEdits(body, edits)
}

// problem says what went wrong with a file, in a few words.
func problem(err error) string {
	if errors.Is(err, os.ErrNotExist) {
		return "no such file in the vault, not sent"
	}
	return err.Error()
}

// imageTarget is the file a reference shows when it is an image publish sends: the
// target of a wikilink or embed, or the relative destination of a Markdown link or image.
func imageTarget(r render.Reference) (string, bool) {
	if (r.Kind == render.RefLink || r.Kind == render.RefImage) && (r.DestStart < 0 || r.External) {
		return "", false
	}
	return r.Target, r.Target != "" && isImageTarget(r.Target)
}

// imageEdits rewrites reference r of img to the form the server resolves
// (libs/note ReplaceImageLinks): an embed becomes ![alt|size]([[name]]), a wikilink
// [[name|text]], a Markdown image or link gets [[name]] as its destination. A size the
// note gives is kept; an SVG's own width is the size of a reference that gives none.
func imageEdits(r render.Reference, img *localImage) []edit {
	size := ""
	if r.Width > 0 {
		size = strconv.Itoa(r.Width)
		if r.Height > 0 {
			size += "x" + strconv.Itoa(r.Height)
		}
	} else if img.width > 0 && (r.Kind == render.RefEmbed || r.Kind == render.RefImage) {
		size = strconv.Itoa(img.width)
	}
	link := "[[" + img.name + "]]"
	switch r.Kind {
	case render.RefEmbed:
		alt := r.Text
		if alt == "" {
			alt = img.name
		}
		return []edit{{r.Start, r.End, "![" + escapeLinkText(alt) + withSize(size) + "](" + link + ")"}}
	case render.RefWikilink:
		if r.Text == "" {
			return []edit{{r.Start, r.End, link}}
		}
		return []edit{{r.Start, r.End, "[[" + img.name + "|" + r.Text + "]]"}}
	case render.RefImage:
		return []edit{{r.Start, r.DestStart, "![" + r.Text + withSize(size) + "]("}, {r.DestStart, r.DestEnd, link}}
	}
	return []edit{{r.DestStart, r.DestEnd, link}}
}

func withSize(size string) string {
	if size == "" {
		return ""
	}
	return "|" + size
}

// applyEdits makes the edits; of two that overlap (a reference in an image's alt text),
// the one that starts first wins, as on the server.
func applyEdits(body string, edits []edit) string {
	slices.SortStableFunc(edits, func(a, b edit) int { return a.start - b.start })
	out, last := make([]byte, 0, len(body)), 0
	for _, e := range edits {
		if e.start >= last {
			out = append(append(out, body[last:e.start]...), e.text...)
			last = e.end
		}
	}
	return string(append(out, body[last:]...))
}

// escapeLinkText escapes the characters that would end Markdown link text early.
func escapeLinkText(s string) string {
	return strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`).Replace(s)
}
