package app

import (
	"context"

	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/render"
)

// Renderer is the note domain's renderer: libs/render's bounded Markdown pipeline.
type Renderer struct{}

var _ note.Renderer = Renderer{}

// Render implements note.Renderer.
func (Renderer) Render(ctx context.Context, tenant, markdown string) (note.Rendered, error) {
	r, err := render.Markdown(ctx, markdown, render.Options{Tenant: tenant})
	if err != nil {
		return note.Rendered{}, err
	}
	out := note.Rendered{HTML: string(r.HTML), Fallbacks: make([]note.Fallback, len(r.Fallbacks)), Miss: misses[r.Miss]}
	for i, f := range r.Fallbacks {
		out.Fallbacks[i] = note.Fallback{Ref: f.Ref, Reason: f.Reason}
	}
	if len(r.Links) > 0 {
		out.Links = note.Links{Nonce: r.Nonce, List: make([]note.Link, len(r.Links))}
		for i, l := range r.Links {
			out.Links.List[i] = note.Link{Title: l.Target, Fragment: l.Fragment}
		}
	}
	return out, nil
}

// misses translates the renderer's misses into the domain's.
var misses = map[render.Miss]note.Miss{render.MissNone: note.MissNone, render.MissBusy: note.MissBusy, render.MissDeadline: note.MissDeadline}

// ResolveLinks implements note.Renderer.
func (Renderer) ResolveLinks(html string, links note.Links, urls []string) string {
	list := make([]render.Link, len(links.List))
	for i, l := range links.List {
		list[i] = render.Link{Target: l.Title, Fragment: l.Fragment}
	}
	return render.ResolveLinks(html, links.Nonce, list, urls)
}

// Version implements note.Renderer.
func (Renderer) Version() int { return render.Version }
