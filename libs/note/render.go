package note

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/sharenote/sharenote/libs/render"
)

// A note's render depends on that note only (docs/api.md "Rendering"):
// its note links are resolved when a page is built (ReadPage), so no note is rendered
// again because another changed, and reads never render. A render that shows the note
// as plain text for a reason that may pass (the renderer was busy, or the note missed
// its time bound) is stored for now only, with RenderVersion 0, and RenderPending renders
// it again in the background, backing off; a note that misses its own bound twice is
// stored as its plain text for good. Renders of an older renderer are redone by
// RenderPending too.

// The causes of renders, as sharenote_note_renders_total counts them.
const (
	causePublish    = "publish"
	causeUpdate     = "update"
	causeBackground = "background"
)

// backgroundTenant is the renderer's tenant of background renders: in the fair queue,
// they take their turn beside each account's publishes.
const backgroundTenant = "\x00background"

// Background rendering: a claim holds a publication for renderLease; a temporary render
// is tried again after retryBase, doubling up to retryMax; each run of RenderPending
// claims renderBatch at a time.
const (
	renderLease = time.Minute
	retryBase   = time.Second
	retryMax    = 5 * time.Minute
	renderBatch = 8
)

// render renders p's content into p's HTML, RenderVersion, RenderID, Links and render
// tries, and turns the blocks shown as plain text and the files that w (the content as
// written; nil in the background) names and the page cannot show into warnings. look,
// when not nil, is started by the render's parse: the caller closes it, and warns of the
// links that lead nowhere (warnUnknownLinks). A render shown whole as text for a reason
// that may pass is stored for now only (RenderVersion 0), unless the note missed its own
// time bound before: then the text is its render.
func (c *core) render(ctx context.Context, p *Publication, w *written, look *linkLookup, cause string) error {
	tenant := p.AccountCUID
	if cause == causeBackground {
		tenant = backgroundTenant
	}
	var parsed func(Links)
	if look != nil {
		parsed = look.start
	}
	r, err := c.renderer.Render(ctx, tenant, p.Content, parsed)
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	p.HTML, p.RenderID, p.Links, p.Outline = r.HTML, newETag(), r.Links, r.Outline
	if w != nil {
		refs := r.References
		if r.Miss != MissNone {
			refs = render.References(p.Content) // the render did not parse it
		}
		p.Warnings = append(p.Warnings, w.warnings(refs)...)
	}
	outcome := "final"
	if r.Miss == MissNone || r.Miss == MissDeadline && p.RenderMisses > 0 {
		p.RenderVersion, p.RenderTries, p.RenderMisses, p.RenderRetry = c.renderer.Version(), 0, 0, time.Time{}
	} else {
		outcome = "temporary"
		p.RenderVersion = 0
		p.RenderTries++
		if r.Miss == MissDeadline {
			p.RenderMisses++
		}
		p.RenderRetry = c.now().Add(retryAfter(p.RenderTries))
	}
	c.rendered(cause, outcome)
	for _, f := range r.Fallbacks {
		msg := "A block is shown as plain text: " + f.Reason + "."
		if outcome == "temporary" {
			msg = "The note is shown as plain text for now: " + f.Reason + "; it is rendered again in the background."
		}
		p.Warnings = append(p.Warnings, Warning{Code: WarnRenderFallback, Ref: f.Ref, Message: msg})
	}
	return nil
}

// lookUp is the lookup of p's links through resolve, to be started by p's render: the
// render's parse finds them, and they are looked up while it goes on.
func (c *core) lookUp(ctx context.Context, p *Publication, resolve ResolveNames) *linkLookup {
	return &linkLookup{c: c, ctx: ctx, account: p.AccountCUID, self: p.CUID, from: deref(p.Path), resolve: resolve}
}

// linkLookup looks up a note's links while the note is rendered: the render calls start
// once it has parsed the note, and targets returns what the lookup found, for the links
// the render ended with.
type linkLookup struct {
	c       *core
	ctx     context.Context
	account string
	self    string // the note's cuid: a link to it is not found (see targets)
	from    string // the note's path
	resolve ResolveNames

	mu     sync.Mutex
	closed bool          // start does nothing any more
	done   chan struct{} // closed when the lookup has ended; nil until it starts
	links  Links         // what it looks up
	found  []NameHit
	err    error
}

// start looks up links in the background, unless a lookup started or ended before.
func (l *linkLookup) start(links Links) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.done != nil {
		return
	}
	l.links, l.done = links, make(chan struct{})
	go func() {
		defer close(l.done)
		l.found, l.err = l.c.resolveLinks(l.ctx, l.account, l.from, links, l.resolve)
	}()
}

// targets returns the publications links name (see resolveLinks): what the lookup
// found when it looked up the same links, else a lookup now. The note itself is never
// among them: a publish looks its links up while its row is being inserted, and whether
// the lookup sees it must not depend on which ends first (a note's link to its own name
// is unknown at its publish, and leads to it on its page).
func (l *linkLookup) targets(links Links) ([]NameHit, error) {
	started := l.close()
	found, err := l.found, l.err
	if !started || !slices.Equal(l.links.List, links.List) {
		found, err = l.c.resolveLinks(l.ctx, l.account, l.from, links, l.resolve)
	}
	for i := range found {
		if found[i].CUID == l.self {
			found[i] = NameHit{}
		}
	}
	return found, err
}

// close ends the lookup's life: a later start does nothing, and a started lookup is
// waited for (a lookup within a store transaction ends before it does). It reports
// whether one had started.
func (l *linkLookup) close() bool {
	l.mu.Lock()
	l.closed = true
	done := l.done
	l.mu.Unlock()
	if done == nil {
		return false
	}
	<-done
	return true
}

// retryAfter is the wait before the background renders a note again after its tries-th
// temporary render: retryBase doubling up to retryMax, a quarter of it random so that
// notes made temporary together are not tried again together.
func retryAfter(tries int) time.Duration {
	d := min(retryMax, retryBase<<min(tries-1, 16))
	return d - time.Duration(rand.Int64N(int64(d/4)+1))
}

// Renders renders again, in the background, the renders that are temporary or of an older
// renderer, and indexes the names the link index lacks.
type Renders struct {
	*core
	store RenderStore
}

// NewRenders returns the Renders over store, rendering with renderer; it panics without
// one.
func NewRenders(store RenderStore, renderer Renderer, cfg Config) *Renders {
	return &Renders{core: newCore("Renders", cfg, renderer, true), store: store}
}

// RenderPending renders again, one at a time, the publications whose stored render is
// temporary, missing or made by an older renderer, once their retry time has come. Each
// is claimed first, so that one process renders it however many run this; a render is
// stored only if the publication has not changed meanwhile, and every process is told.
// It returns when none is left to take.
func (c *Renders) RenderPending(ctx context.Context) error {
	for {
		now := c.now()
		cuids, err := c.store.ClaimRenders(ctx, c.renderer.Version(), now, now.Add(renderLease), renderBatch)
		if err != nil || len(cuids) == 0 {
			return err
		}
		for _, id := range cuids {
			if err := c.renderAgain(ctx, id); err != nil {
				return fmt.Errorf("render %s again: %w", id, err)
			}
		}
	}
}

// renderAgain renders a claimed publication again and stores the render.
func (c *Renders) renderAgain(ctx context.Context, cuid string) error {
	v, err := c.store.FindView(ctx, cuid)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	p := v.Publication
	if err := c.render(ctx, &p, nil, nil, causeBackground); err != nil {
		return err
	}
	if p.RenderVersion == 0 && v.RenderVersion > 0 {
		// A temporary render does not replace one an older renderer made of the same
		// content: that one stays until a render of this renderer takes its place.
		p.HTML, p.Links, p.Outline, p.RenderID, p.RenderVersion = v.HTML, v.Links, v.Outline, v.RenderID, v.RenderVersion
	}
	change := c.renderChange(v.Publication, p)
	if err := c.store.SaveRender(ctx, p, v.RenderID, change); err != nil {
		return fmt.Errorf("save render: %w", err)
	}
	if p.RenderID != v.RenderID {
		c.tell(ctx, change)
	}
	return nil
}

// indexBatch is how many publications one call of RenderStore.IndexNames indexes.
const indexBatch = 200

// IndexNames indexes the names of the publications that the link index holds under an
// older NamesVersion, or not at all (those published before it), until none is left, and
// tells each of their accounts' readers that their links may lead elsewhere now.
func (c *Renders) IndexNames(ctx context.Context) error {
	for {
		accounts, err := c.store.IndexNames(ctx, indexBatch)
		if err != nil || len(accounts) == 0 {
			return err
		}
		slices.Sort(accounts)
		for _, a := range slices.Compact(accounts) {
			c.tell(ctx, IndexChange(a))
		}
	}
}
