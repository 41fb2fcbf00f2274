package note

import (
	"regexp"
	"slices"
	"strings"
)

// maxReferenceWarnings caps the reference warnings of one change, as the renderer caps its
// fallbacks: a note of thousands of broken references gets a readable list.
const maxReferenceWarnings = 100

// wikiReference is a [[name]] reference as Obsidian reads it: the text up to the first
// "]]", on one line.
var wikiReference = regexp.MustCompile(`\[\[([^\[\]\n]{1,255})\]\]`)

// referenceWarnings are the warnings about a note's images once its content had its
// image references resolved (body, with urls the note's images' URLs by name):
// unresolved_reference for each [[name]] left whose name is an image file (by its
// extension, before any |size) that the note does not have, and unused_image for each
// image of the note that body does not show.
func referenceWarnings(body string, urls map[string]string) []Warning {
	var out []Warning
	seen := map[string]bool{}
	for _, m := range wikiReference.FindAllStringSubmatch(body, -1) {
		ref := m[1]
		name, _, _ := strings.Cut(ref, "|")
		if !isImageName(name) || seen[ref] || len(out) == maxReferenceWarnings {
			continue
		}
		seen[ref] = true
		out = append(out, Warning{Code: WarnUnresolvedReference, Ref: ref,
			Message: "No image of this note is named " + name + "; upload it with the note, under exactly this name."})
	}
	names := make([]string, 0, len(urls))
	for name, url := range urls {
		if !strings.Contains(body, url) {
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
