package note

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/sharenote/sharenote/libs/routes"
)

// ReadPage is ReadView with the note links of the view's HTML resolved among its author's
// active publications and its embeds shown (embeds.go), LinksTag naming what they
// resolved to and the renders shown, LinksExpireAt the earliest expiry among the notes
// they lead to or show, Embeds the notes shown, and Unchanged the re-check of what it
// was built from (pagestate.go).
func (c *Reader) ReadPage(ctx context.Context, cuid string) (View, error) {
	v, err := c.activeView(ctx, cuid, c.store.FindView)
	if err != nil || len(v.Links.List) == 0 {
		return public(v), err
	}
	now := c.now()
	p := c.newPage(v)
	root := p.renders[v.CUID]
	if err := p.load(ctx, root); err != nil {
		return View{}, err
	}
	v.HTML = p.build(root, v.HTML, []string{v.CUID})
	v.LinksTag, v.LinksExpireAt, v.Embeds, v.Linked = hex.EncodeToString(p.tag.Sum(nil)[:12]), p.expires, p.embeds, p.linked
	p.src.Sum = p.state.sum(now, p.src.Outlined)
	src, account := p.src, v.AccountCUID // Not v: a cached entry keeps the closure, and v its HTML.
	v.Unchanged = func(ctx context.Context) (bool, error) { return c.pageUnchanged(ctx, account, &src) }
	return public(v), nil
}

// href is the address of a link to the publication cuid, whose render's outline is
// outline, with fragment: its page, at the fragment's anchor when the render has it.
func (c *core) href(cuid, outline, fragment string) string {
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
// publications, as look finds them: one warning per target as written. It returns what
// look found, the target of each link.
func (c *core) warnUnknownLinks(p *Publication, look *linkLookup) ([]NameHit, error) {
	targets, err := look.targets(p.Links)
	if err != nil {
		return nil, err
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
	return targets, nil
}

// warnMissingParts warns of p's embeds of a heading or block that the note they name
// (targets[i], what p.Links.List[i] resolved to: warnUnknownLinks) does not have: the page
// shows a link there. One warning per embed as written, code WarnUnknownNoteLink
// (docs/api.md). It reads the outlines outside any transaction.
func (c *Publisher) warnMissingParts(ctx context.Context, p *Publication, targets []NameHit) error {
	var cuids []string
	for i, l := range p.Links.List {
		if t := targets[i]; l.Embed && l.Fragment != "" && t.CUID != "" && !slices.Contains(cuids, t.CUID) {
			cuids = append(cuids, t.CUID)
		}
	}
	if len(cuids) == 0 {
		return nil
	}
	outlines, err := c.store.Outlines(ctx, cuids)
	if err != nil {
		return fmt.Errorf("read outlines: %w", err)
	}
	var warned []string
	for i, l := range p.Links.List {
		ref := l.Target + "#" + l.Fragment
		if !l.Embed || l.Fragment == "" || targets[i].CUID == "" || len(warned) == maxReferenceWarnings || slices.Contains(warned, ref) {
			continue
		}
		if _, ok := c.renderer.Anchor(outlines[targets[i].CUID], l.Fragment); !ok {
			warned = append(warned, ref)
			p.Warnings = append(p.Warnings, Warning{Code: WarnUnknownNoteLink, Ref: ref,
				Message: l.Target + " has no heading or block " + l.Fragment + "; the embed shows as a link to the note."})
		}
	}
	return nil
}
