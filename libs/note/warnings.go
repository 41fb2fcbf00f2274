package note

import (
	"slices"
	"strings"

	"github.com/sharenote/sharenote/libs/render"
)

// maxReferenceWarnings caps the reference warnings of one change, as the renderer caps its
// fallbacks: a note of thousands of broken references gets a readable list.
const maxReferenceWarnings = 100

// WarnUnsupportedEmbed: a reference names a file the page cannot show (audio, video,
// PDF, …); the page shows its name.
const WarnUnsupportedEmbed = "unsupported_embed"

// referenceWarnings are the warnings about the files a note's body references (refs, its
// references, found before its image references were resolved with urls, the note's
// images' URLs by name), one per name: unresolved_reference for an image file (by its
// extension) that the note does not have, unsupported_embed for another file Obsidian
// shows (render.IsAttachment), and unused_image for each image of the note that body
// neither references nor links by its URL. References in code, math and comments are
// data and warn of nothing; links to notes are warned of when they are resolved.
func referenceWarnings(refs []render.Reference, body string, urls map[string]string) []Warning {
	var out []Warning
	seen, used := map[string]bool{}, map[string]bool{}
	for _, r := range refs {
		name, _, _, ok := imageName(r)
		if !ok {
			continue
		}
		if _, uploaded := urls[name]; uploaded {
			used[name] = true
			continue
		}
		if seen[name] || len(out) == maxReferenceWarnings {
			continue
		}
		switch {
		case isImageName(name):
			out = append(out, Warning{Code: WarnUnresolvedReference, Ref: name,
				Message: "No image of this note is named " + name + "; upload it with the note, under exactly this name."})
		case render.IsAttachment(name) && r.Kind != render.RefLink:
			out = append(out, Warning{Code: WarnUnsupportedEmbed, Ref: name,
				Message: "The page cannot show " + name + "; it shows its name instead."})
		}
		seen[name] = true
	}
	names := make([]string, 0, len(urls))
	for name, url := range urls {
		if !used[name] && !strings.Contains(body, url) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names[:min(len(names), maxReferenceWarnings)] {
		out = append(out, Warning{Code: WarnUnusedImage, Ref: name,
			Message: "The note does not show this image: reference it as ![[" + name + "]] or leave it out."})
	}
	return out
}

// isImageName reports whether a reference's name is an image file's, by its extension.
func isImageName(name string) bool {
	_, _, ok := imageFormat(name)
	return ok
}
