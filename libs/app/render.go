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
func (Renderer) Render(ctx context.Context, markdown string, resolve note.Resolver) (note.Rendered, error) {
	r, err := render.Markdown(ctx, markdown, render.Options{Resolve: resolve})
	if err != nil {
		return note.Rendered{}, err
	}
	fallbacks := make([]note.Fallback, len(r.Fallbacks))
	for i, f := range r.Fallbacks {
		fallbacks[i] = note.Fallback{Ref: f.Ref, Reason: f.Reason}
	}
	return note.Rendered{HTML: string(r.HTML), Fallbacks: fallbacks, Links: r.Links, Resolved: r.Resolved}, nil
}

// Version implements note.Renderer.
func (Renderer) Version() int { return render.Version }
