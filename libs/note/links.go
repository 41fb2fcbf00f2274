package note

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"time"

	"github.com/sharenote/sharenote/libs/routes"
)

// ReadPage is ReadView with the note links of the view's HTML resolved among its author's
// active publications (one query of the link index), LinksTag naming what they resolved
// to and LinksExpireAt the earliest expiry among the notes they lead to.
func (c *Core) ReadPage(ctx context.Context, cuid string) (View, error) {
	v, err := c.activeView(ctx, cuid, c.store.FindView)
	if err != nil || c.renderer == nil || len(v.Links.List) == 0 {
		return public(v), err
	}
	targets, err := c.resolveLinks(ctx, v.AccountCUID, deref(v.Path), v.Links, c.store.ResolveNames)
	if err != nil {
		return View{}, err
	}
	outlines, err := c.outlines(ctx, v.Links, targets)
	if err != nil {
		return View{}, err
	}
	urls := make([]string, len(v.Links.List))
	tag := sha256.New()
	for i, t := range targets {
		if t.CUID != "" {
			urls[i] = c.href(t.CUID, outlines[t.CUID], v.Links.List[i].Fragment)
			v.LinksExpireAt = earlier(v.LinksExpireAt, t.ExpiresAt)
		}
		tag.Write([]byte(urls[i]))
		tag.Write([]byte{0})
	}
	v.HTML = c.renderer.ResolveLinks(v.HTML, v.Links, urls)
	v.LinksTag = hex.EncodeToString(tag.Sum(nil)[:12])
	return public(v), nil
}

// outlines reads the outlines of the targets that links with a fragment lead to.
func (c *Core) outlines(ctx context.Context, links Links, targets []NameHit) (map[string]string, error) {
	var cuids []string
	for i, t := range targets {
		if t.CUID != "" && links.List[i].Fragment != "" && !slices.Contains(cuids, t.CUID) {
			cuids = append(cuids, t.CUID)
		}
	}
	if len(cuids) == 0 {
		return nil, nil
	}
	return c.store.Outlines(ctx, cuids)
}

// href is the address of a link to the publication cuid, whose render's outline is
// outline, with fragment: its page, at the fragment's anchor when the render has it.
func (c *Core) href(cuid, outline, fragment string) string {
	url := routes.NotePage.URL(c.publicURL, cuid)
	if fragment == "" {
		return url
	}
	if anchor, ok := c.renderer.Anchor(outline, fragment); ok {
		url += "#" + anchor
	}
	return url
}

// earlier is the earlier of two expiries, nil meaning never.
func earlier(a, b *time.Time) *time.Time {
	if a == nil || b != nil && b.Before(*a) {
		return b
	}
	return a
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// warnUnknownLinks warns of p's note links that name none of its author's active
// publications, as look finds them: one warning per target as written.
func (c *Core) warnUnknownLinks(p *Publication, look *linkLookup) error {
	targets, err := look.targets(p.Links)
	if err != nil {
		return err
	}
	var warned []string
	for i, l := range p.Links.List {
		if targets[i].CUID != "" || l.Target == "" || isImageName(l.Target) || len(warned) == maxReferenceWarnings ||
			slices.Contains(warned, l.Target) {
			continue
		}
		warned = append(warned, l.Target)
		p.Warnings = append(p.Warnings, Warning{Code: WarnUnknownNoteLink, Ref: l.Target,
			Message: "None of your active notes is named " + l.Target + "; the link shows as plain text until one is."})
	}
	return nil
}
