package ogrenderer

import (
	"context"
	"fmt"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/cuid"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/readcache"
	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/services/ogrenderer/internal/ogcard"
)

// Site is the name drawn in the corner of every card.
const Site = "sharenote"

// api draws and serves preview cards. A card is drawn once per change of its
// publication or its owner's settings: the PNG is kept in the read cache, and readers
// asking at the same time wait for one drawing.
type api struct {
	cards    *note.Cards
	renderer *ogcard.Renderer
	public   *noteapi.Public
	// card is the public read of a note's preview card.
	card    noteapi.ViewRead
	renders prometheus.Counter
}

// newAPI returns the API with its metrics registered on reg; reads are answered by public.
func newAPI(cards *note.Cards, public *noteapi.Public, reg prometheus.Registerer) (*api, error) {
	r, err := ogcard.NewRenderer()
	if err != nil {
		return nil, err
	}
	a := &api{cards: cards, renderer: r, public: public,
		renders: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sharenote_og_renders_total",
			Help: "PNG previews drawn; cached reads are not counted.",
		}),
	}
	if err := reg.Register(a.renders); err != nil {
		return nil, fmt.Errorf("og metrics: %w", err)
	}
	a.card = a.cardRead()
	return a, nil
}

// handlers attaches the handlers of the target to its routes; a route added to the
// target gets its line here.
func (a *api) handlers() app.Handlers {
	return app.Handlers{
		routes.OGImage: a.Image,
	}
}

// Image answers the preview of an active publication. :file must be "<cuid>.png".
func (a *api) Image(c *gin.Context) {
	id, ok := strings.CutSuffix(c.Param("file"), ".png")
	if !ok || !cuid.Valid(id) {
		noteapi.NotFoundJSON(c)
		return
	}
	a.public.ServeView(c, id, a.card)
}

// cardRead is the read of a note's preview card.
func (a *api) cardRead() noteapi.ViewRead {
	return noteapi.ViewRead{Route: routes.OGImage, NotFound: noteapi.NotFoundJSON, View: a.cards.ReadCard,
		Tag: func(v note.View) string { return cacheKey(cardFor(v)) }, Build: a.buildCard}
}

// buildCard is the cache entry of v's preview card, drawn.
func (a *api) buildCard(_ context.Context, v note.View, etag string) (*readcache.Entry, error) {
	png, err := a.renderer.PNG(cardFor(v))
	if err != nil {
		return nil, err
	}
	a.renders.Inc()
	return noteapi.Entry(v, etag, "image/png", png), nil
}

// cardFor is what the preview of p shows with its owner's settings: the note's
// description (note.Text.Description, as on its page) under its title, the author only
// when the owner shows it, the dark palette only for the dark theme ("system" has no
// reader to ask, so it is light), and the default accent should a stored colour not
// parse. The font setting is not drawn: the card always uses the embedded Go fonts,
// which have no serif.
func cardFor(v note.View) ogcard.Card {
	s := v.Owner
	c := ogcard.Card{Site: Site, Dark: s.Theme == "dark"}
	if v.Title != nil {
		c.Title = *v.Title
	}
	c.Summary = v.Description()
	if s.ShowAuthor {
		c.Author = s.Name
	}
	c.Accent = s.Accent()
	return c
}

// cacheKey is the validator of a card: everything the picture depends on, which are the
// drawing's version and the card's contents (they carry every setting that shows:
// author, theme, accent). A change of the note that leaves the card as it was keeps it,
// and its drawing.
func cacheKey(c ogcard.Card) string {
	return noteapi.Tag(fmt.Sprint(ogcard.Version), c.Title, c.Summary, c.Author, c.Site, fmt.Sprint(c.Dark),
		fmt.Sprintf("%02x%02x%02x", c.Accent.R, c.Accent.G, c.Accent.B))
}
