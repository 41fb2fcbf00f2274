package note

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/sharenote/sharenote/libs/routes"
)

// ReadPage is ReadView with the note links of the view's HTML resolved among its author's
// active publications (one query by index), LinksTag naming what they resolved to and
// LinksExpireAt the earliest expiry among the notes they lead to.
func (c *Core) ReadPage(ctx context.Context, cuid string) (View, error) {
	v, err := c.ReadView(ctx, cuid)
	titles := v.Links.titles()
	if err != nil || c.renderer == nil || len(titles) == 0 {
		return v, err
	}
	found, err := c.store.ResolveTitles(ctx, v.AccountCUID, titles, c.Clock())
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

// warnUnknownLinks warns of p's note links that name none of its author's active
// publications, found through resolve.
func (c *Core) warnUnknownLinks(ctx context.Context, p *Publication, resolve ResolveTitles) error {
	titles := p.Links.titles()
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

// titles returns the distinct titles of notes the links name, in order. An image's name
// is a reference to an image, not to a note: it never resolves to one.
func (l Links) titles() []string {
	var titles []string
	for _, link := range l.List {
		if !isImageName(link.Title) && !slices.Contains(titles, link.Title) {
			titles = append(titles, link.Title)
		}
	}
	return titles
}
