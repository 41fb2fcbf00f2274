package app

import (
	"context"
	"encoding/json"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/render"
)

// Renderer is the note domain's renderer: libs/render's bounded Markdown pipeline.
type Renderer struct{}

var _ note.Renderer = Renderer{}

// Render implements note.Renderer.
func (Renderer) Render(ctx context.Context, tenant, markdown string, parsed func(note.Links)) (note.Rendered, error) {
	opts := render.Options{Tenant: tenant}
	if parsed != nil {
		opts.Parsed = func(links []render.Link) { parsed(noteLinks(links, "")) }
	}
	r, err := render.Markdown(ctx, markdown, opts)
	if err != nil {
		return note.Rendered{}, err
	}
	out := note.Rendered{HTML: string(r.HTML), Fallbacks: make([]note.Fallback, len(r.Fallbacks)), Miss: misses[r.Miss],
		References: r.References}
	for i, f := range r.Fallbacks {
		out.Fallbacks[i] = note.Fallback{Ref: f.Ref, Reason: f.Reason}
	}
	if len(r.Links) > 0 {
		out.Links = noteLinks(r.Links, r.Nonce)
	}
	if len(r.Outline.Headings) > 0 || len(r.Outline.Blocks) > 0 {
		b, err := json.Marshal(r.Outline)
		if err != nil {
			return note.Rendered{}, err
		}
		out.Outline = string(b)
	}
	return out, nil
}

// noteLinks are a render's links, whose placeholders have nonce, as the domain's.
func noteLinks(links []render.Link, nonce string) note.Links {
	out := note.Links{Nonce: nonce, List: make([]note.Link, len(links))}
	for i, l := range links {
		out.List[i] = note.Link{Target: l.Target, Fragment: l.Fragment, Embed: l.Embed}
	}
	return out
}

// misses translates the renderer's misses into the domain's.
var misses = map[render.Miss]note.Miss{render.MissNone: note.MissNone, render.MissBusy: note.MissBusy, render.MissDeadline: note.MissDeadline}

// ResolveLinks implements note.Renderer.
func (Renderer) ResolveLinks(html string, links note.Links, urls []string, embed func(int) string) string {
	list := make([]render.Link, len(links.List))
	for i, l := range links.List {
		list[i] = render.Link{Target: l.Target, Fragment: l.Fragment, Embed: l.Embed}
	}
	return render.Resolve(html, links.Nonce, list, urls, embed)
}

// Anchor implements note.Renderer: outline is a render's Outline as JSON.
func (Renderer) Anchor(outline, fragment string) (string, bool) {
	o, ok := parseOutline(outline)
	if !ok {
		return "", false
	}
	return o.Anchor(fragment)
}

// SameAnchors implements note.Renderer: the outlines' headings and block ids, not their
// spans, are compared.
func (Renderer) SameAnchors(a, b string) bool {
	x, _ := parseOutline(a)
	y, _ := parseOutline(b)
	return render.SameAnchors(x, y)
}

// Cut implements note.Renderer: outline is a render's Outline as JSON.
func (Renderer) Cut(html, outline, fragment string) (string, bool) {
	o, ok := parseOutline(outline)
	if !ok && fragment != "" {
		return "", false
	}
	return render.Cut(html, o, fragment)
}

// Frame implements note.Renderer.
func (Renderer) Frame(content, title, url string) string { return render.Frame(content, title, url) }

// parseOutline reads a render's Outline from its JSON; false for none.
func parseOutline(outline string) (render.Outline, bool) {
	var o render.Outline
	if outline == "" || json.Unmarshal([]byte(outline), &o) != nil {
		return render.Outline{}, false
	}
	return o, true
}

// Version implements note.Renderer.
func (Renderer) Version() int { return render.Version }
