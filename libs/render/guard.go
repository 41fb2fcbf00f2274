package render

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// newRenderer is goldmark's default renderer, guarded.
func newRenderer() renderer.Renderer {
	r := guarded{renderer.NewRenderer()}
	r.AddOptions(renderer.WithNodeRenderers(util.Prioritized(html.NewRenderer(), 1000)))
	return r
}

// guarded is a goldmark renderer whose node renderers, its extensions' included, first
// check the pass's sink: once the output is over the cap or the context is done, the
// walk stops at the next node instead of rendering the rest of the note into nothing.
type guarded struct{ renderer.Renderer }

// AddOptions adds opts with each node renderer among them wrapped in checked.
func (g guarded) AddOptions(opts ...renderer.Option) {
	for _, opt := range opts {
		c := renderer.NewConfig()
		opt.SetConfig(c)
		for name, value := range c.Options {
			g.Renderer.AddOptions(renderer.WithOption(name, value))
		}
		for _, v := range c.NodeRenderers {
			g.Renderer.AddOptions(renderer.WithNodeRenderers(
				util.Prioritized(checked{v.Value.(renderer.NodeRenderer)}, v.Priority)))
		}
	}
}

// checked is a node renderer whose functions stop the walk once the pass is over.
type checked struct{ renderer.NodeRenderer }

// SetOption passes renderer options on to the wrapped node renderer.
func (c checked) SetOption(name renderer.OptionName, value any) {
	if s, ok := c.NodeRenderer.(renderer.SetOptioner); ok {
		s.SetOption(name, value)
	}
}

func (c checked) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	c.NodeRenderer.RegisterFuncs(registerer(func(kind ast.NodeKind, f renderer.NodeRendererFunc) {
		reg.Register(kind, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
			s := w.(*sink)
			if err := s.check(); err != nil {
				return ast.WalkStop, err
			}
			if !entering {
				defer s.markSpan(n, false)
			} else {
				s.markSpan(n, true)
			}
			return f(w, source, n, entering)
		})
	}))
}

// registerer is a NodeRendererFuncRegisterer made of a function.
type registerer func(ast.NodeKind, renderer.NodeRendererFunc)

func (r registerer) Register(kind ast.NodeKind, f renderer.NodeRendererFunc) { r(kind, f) }
