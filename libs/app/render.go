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
func (Renderer) Render(ctx context.Context, markdown string) (string, []note.Fallback, error) {
	r, err := render.Markdown(ctx, markdown)
	if err != nil {
		return "", nil, err
	}
	fallbacks := make([]note.Fallback, len(r.Fallbacks))
	for i, f := range r.Fallbacks {
		fallbacks[i] = note.Fallback{Ref: f.Ref, Reason: f.Reason}
	}
	return string(r.HTML), fallbacks, nil
}

// Version implements note.Renderer.
func (Renderer) Version() int { return render.Version }
