package note

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/sharenote/sharenote/libs/routes"
)

// A note's render depends on that note only (CONTRACT.md "Caching and invalidation"):
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
// tries, and turns the blocks shown as plain text and the links that lead nowhere (found
// through resolve) into warnings. A render shown whole as text for a reason that may pass
// is stored for now only (RenderVersion 0), unless the note missed its own time bound
// before: then the text is its render.
func (c *Core) render(ctx context.Context, p *Publication, resolve ResolveTitles, cause string) error {
	if c.renderer == nil {
		return nil
	}
	tenant := p.AccountCUID
	if cause == causeBackground {
		tenant = backgroundTenant
	}
	r, err := c.renderer.Render(ctx, tenant, p.Content)
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	p.HTML, p.RenderID, p.Links = r.HTML, newETag(), r.Links
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
		p.RenderRetry = c.Clock().Add(retryAfter(p.RenderTries))
	}
	c.renders.WithLabelValues(cause, outcome).Inc()
	for _, f := range r.Fallbacks {
		msg := "A block is shown as plain text: " + f.Reason + "."
		if outcome == "temporary" {
			msg = "The note is shown as plain text for now: " + f.Reason + "; it is rendered again in the background."
		}
		p.Warnings = append(p.Warnings, Warning{Code: WarnRenderFallback, Ref: f.Ref, Message: msg})
	}
	if cause == causeBackground {
		return nil
	}
	return c.warnUnknownLinks(ctx, p, resolve)
}

// retryAfter is the wait before the background renders a note again after its tries-th
// temporary render: retryBase doubling up to retryMax, a quarter of it random so that
// notes made temporary together are not tried again together.
func retryAfter(tries int) time.Duration {
	d := min(retryMax, retryBase<<min(tries-1, 16))
	return d - time.Duration(rand.Int64N(int64(d/4)+1))
}

// warnUnknownLinks warns of p's note links that name none of its author's active
// publications, found through resolve.
func (c *Core) warnUnknownLinks(ctx context.Context, p *Publication, resolve ResolveTitles) error {
	titles := p.Links.titles()
	titles = slices.DeleteFunc(titles, isImageName)
	if len(titles) == 0 {
		return nil
	}
	found, err := resolve(ctx, p.AccountCUID, titles, c.Clock())
	if err != nil {
		return fmt.Errorf("resolve links: %w", err)
	}
	unknown := 0
	for _, title := range titles {
		if _, ok := found[title]; ok || unknown == maxReferenceWarnings {
			continue
		}
		unknown++
		p.Warnings = append(p.Warnings, Warning{Code: WarnUnknownNoteLink, Ref: title,
			Message: "None of your active notes is titled " + title + "; the link shows as plain text until one is."})
	}
	return nil
}

// titles returns the distinct titles the links name, in order.
func (l Links) titles() []string {
	var titles []string
	for _, link := range l.List {
		if !slices.Contains(titles, link.Title) {
			titles = append(titles, link.Title)
		}
	}
	return titles
}

// ReadView returns an active publication with its owner's settings, for the public:
// ErrNotFound unless it is active. It serves the stored render as it is: reads never
// render (RenderPending redoes stale renders in the background).
func (c *Core) ReadView(ctx context.Context, cuid string) (View, error) {
	v, err := c.store.FindView(ctx, cuid)
	if err != nil {
		return View{}, err
	}
	if v.Status(c.now()) != Active {
		return View{}, ErrNotFound
	}
	return v, nil
}

// ReadPage is ReadView with the note links of the view's HTML resolved among its author's
// active publications (one query by index), LinksTag naming what they resolved to and
// LinksExpireAt the earliest expiry among the notes they lead to.
func (c *Core) ReadPage(ctx context.Context, cuid string) (View, error) {
	v, err := c.ReadView(ctx, cuid)
	if err != nil || c.renderer == nil || len(v.Links.List) == 0 {
		return v, err
	}
	found, err := c.store.ResolveTitles(ctx, v.AccountCUID, v.Links.titles(), c.Clock())
	if err != nil {
		return View{}, fmt.Errorf("resolve links: %w", err)
	}
	urls := make([]string, len(v.Links.List))
	tag := sha256.New()
	for i, l := range v.Links.List {
		if t, ok := found[l.Title]; ok {
			urls[i] = routes.NotePage.URL(c.publicURL, t.CUID)
			tag.Write([]byte(t.CUID))
			if e := t.ExpiresAt; e != nil && (v.LinksExpireAt == nil || e.Before(*v.LinksExpireAt)) {
				v.LinksExpireAt = e
			}
		}
		tag.Write([]byte{0})
	}
	v.HTML = c.renderer.ResolveLinks(v.HTML, v.Links, urls)
	v.LinksTag = hex.EncodeToString(tag.Sum(nil)[:12])
	return v, nil
}

// RenderPending renders again, one at a time, the publications whose stored render is
// temporary, missing or made by an older renderer, once their retry time has come. Each
// is claimed first, so that one process renders it however many run this; a render is
// stored only if the publication has not changed meanwhile, and every process is told.
// It returns when none is left to take.
func (c *Core) RenderPending(ctx context.Context) error {
	if c.renderer == nil {
		return nil
	}
	for {
		now := c.Clock()
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
func (c *Core) renderAgain(ctx context.Context, cuid string) error {
	v, err := c.store.FindView(ctx, cuid)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	p := v.Publication
	if err := c.render(ctx, &p, nil, causeBackground); err != nil {
		return err
	}
	if p.RenderVersion == 0 && v.RenderVersion > 0 {
		// A temporary render does not replace one an older renderer made of the same
		// content: that one stays until a render of this renderer takes its place.
		p.HTML, p.Links, p.RenderID, p.RenderVersion = v.HTML, v.Links, v.RenderID, v.RenderVersion
	}
	if err := c.store.SaveRender(ctx, p, v.RenderID); err != nil {
		return fmt.Errorf("save render: %w", err)
	}
	if p.RenderID != v.RenderID {
		c.notify(ctx, cuid)
	}
	return nil
}
