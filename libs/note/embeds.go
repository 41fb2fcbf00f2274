package note

import (
	"context"
	"crypto/sha256"
	"hash"
	"slices"
	"time"
)

// Embeds (`![[Note]]`, `![[Note#Heading]]`, `![[Note#^id]]`) show a part of another of
// the author's active publications inside the page: ReadPage cuts it from that note's
// stored render (Renderer.Cut: never parsed again), resolves its links as in that note,
// and frames it with the note's title and a link to it (Renderer.Frame). Embeds nest up
// to maxEmbedDepth levels. An embed shows as a link instead when the note embeds itself
// through its embedding notes (a cycle), when it is deeper, when its heading or block is
// missing, or when the page's allowance of embedded content (maxEmbedded), or of renders
// read (maxFetched, maxEmbeddedNotes), is spent; the links of embedded notes past
// maxPageLinks show as text.
// Building a page reads, per level of nesting, the link index once (LinkStore.ResolveNames)
// and the embedded renders once (ReadStore.Embedded), then the outlines of the notes that
// links with a fragment lead to once (LinkStore.Outlines).

// Embedded is the stored render of a publication that a page embeds, as
// ReadStore.Embedded reads it.
type Embedded struct {
	CUID string
	// Title and Path make the title the frame shows (Text.DisplayTitle); the path is
	// never shown.
	Title, Path *string
	HTML        string
	Links       Links
	Outline     string
	ETag        string
	RenderID    string
	ExpiresAt   *time.Time
	// Over: the render did not fit the page's allowance and was not read (HTML is "").
	Over bool
}

const (
	// maxEmbedDepth is how deep embeds nest: the page's note, and three levels of embeds.
	maxEmbedDepth = 3
	// maxEmbedded is the allowance of embedded content in a page, frames included
	// (render.MaxEmbedded; the renderer also keeps the whole page under its cap).
	maxEmbedded = 4 << 20
	// frameBytes is what a frame is charged against the allowance besides its content,
	// title and link.
	frameBytes = 128
	// maxFetched bounds the bytes of the embedded notes' whole renders that building a
	// page reads (the embeds cut parts of them; the store sizes them without reading
	// them), and maxEmbeddedNotes how many notes it reads: the others show as links. It
	// is the allowance itself, so that what a page reads is bounded like what it shows.
	maxFetched       = maxEmbedded
	maxEmbeddedNotes = 500
	// maxPageLinks bounds the links of a page and its embedded notes that are resolved
	// (each at most 4 keys of the link index; a SQLite query takes 32,766 parameters).
	maxPageLinks = 4096
)

// page is a page that ReadPage builds.
type page struct {
	c       *Reader
	account string
	// renders are the page's note's render and those of the notes it embeds, by cuid; a
	// cuid looked for whose render was not read (not one of the author's active notes,
	// or past the page's allowance of renders) maps to nil.
	renders map[string]*pageRender
	// outlines are the outlines of the other notes that links with a fragment lead to
	// (and of those embedded past the allowance).
	outlines map[string]string
	cuts     map[[2]string]cut
	room     int // the allowance of embedded content left
	// fetchRoom and notesLeft are what the page may still read of embedded renders, and
	// linksLeft how many of their links it may still resolve.
	fetchRoom, notesLeft, linksLeft int
	tag                             hash.Hash
	expires                         *time.Time
	embeds                          []string // the cuids of the notes embedded, each once
	linked                          []string // the cuids of the notes linked to, each once
	// src and state are what the page is built from, as it read them (pagestate.go).
	src   PageSources
	state PageState
}

// pageRender is a render in the page, its link targets and their addresses.
type pageRender struct {
	Embedded
	targets []NameHit
	urls    []string // made once, by urlsOf
}

// newPage starts the page of v.
func (c *Reader) newPage(v View) *page {
	root := &pageRender{Embedded: Embedded{CUID: v.CUID, Path: v.Path, HTML: v.HTML, Links: v.Links, Outline: v.Outline,
		RenderID: v.RenderID}}
	return &page{c: c, account: v.AccountCUID, renders: map[string]*pageRender{v.CUID: root}, outlines: map[string]string{}, cuts: map[[2]string]cut{},
		room: maxEmbedded, fetchRoom: maxFetched, notesLeft: maxEmbeddedNotes,
		linksLeft: maxPageLinks, tag: sha256.New(),
		src:   PageSources{Notes: []string{v.CUID}},
		state: PageState{Owner: v.Owner, Notes: []NoteState{{CUID: v.CUID, ETag: v.ETag, RenderID: v.RenderID, Outline: v.Outline, ExpiresAt: v.ExpiresAt}}}}
}

// load resolves the links of the page's note and of the notes it embeds, level by level,
// reading the renders of the notes embedded at each level, then the outlines of the
// other notes that links with a fragment lead to.
func (p *page) load(ctx context.Context, root *pageRender) error {
	level := []*pageRender{root}
	for depth := 0; len(level) > 0; depth++ {
		if err := p.resolve(ctx, level); err != nil {
			return err
		}
		if depth == maxEmbedDepth {
			break
		}
		var err error
		if level, err = p.fetch(ctx, level); err != nil {
			return err
		}
	}
	return p.loadOutlines(ctx)
}

// resolve resolves the links of the renders of level, with one read of the link index,
// as long as the page's allowance of links lasts: the links of the others show as text.
func (p *page) resolve(ctx context.Context, level []*pageRender) error {
	var sets []linkSet
	var resolved []*pageRender
	for _, r := range level {
		r.targets = make([]NameHit, len(r.Links.List))
		if n := len(r.Links.List); n <= p.linksLeft {
			p.linksLeft -= n
			sets = append(sets, linkSet{deref(r.Path), r.Links})
			resolved = append(resolved, r)
		}
	}
	targets, err := p.c.resolveSets(ctx, p.account, sets, p.resolveNames)
	if err != nil {
		return err
	}
	for k, r := range resolved {
		r.targets = targets[k]
	}
	return nil
}

// resolveNames is LinkStore.ResolveNames, keeping the keys and what they found among the
// page's sources.
func (p *page) resolveNames(ctx context.Context, accountCUID string, keys []string, now time.Time) ([]NameHit, error) {
	hits, err := p.c.store.ResolveNames(ctx, accountCUID, keys, now)
	p.src.Keys = append(p.src.Keys, keys...)
	p.state.Names = append(p.state.Names, hits...)
	return hits, err
}

// fetch reads the renders that the notes of level embed and that the page has not looked
// for yet, and returns them.
func (p *page) fetch(ctx context.Context, level []*pageRender) ([]*pageRender, error) {
	var cuids []string
	for _, r := range level {
		for i, t := range r.targets {
			if _, seen := p.renders[t.CUID]; t.CUID != "" && r.Links.List[i].Embed && !seen && len(cuids) < p.notesLeft {
				p.renders[t.CUID] = nil
				cuids = append(cuids, t.CUID)
			}
		}
	}
	if len(cuids) == 0 {
		return nil, nil
	}
	found, err := p.c.store.Embedded(ctx, p.account, cuids, p.c.now(), p.fetchRoom)
	if err != nil {
		return nil, err
	}
	p.notesLeft -= len(cuids)
	p.src.Notes = append(p.src.Notes, cuids...)
	next := make([]*pageRender, 0, len(found))
	for _, e := range found {
		p.state.Notes = append(p.state.Notes, NoteState{CUID: e.CUID, ETag: e.ETag, RenderID: e.RenderID, Outline: e.Outline, ExpiresAt: e.ExpiresAt})
		if e.Over {
			p.outlines[e.CUID] = e.Outline
		} else if _, asked := p.renders[e.CUID]; asked && p.renders[e.CUID] == nil {
			r := &pageRender{Embedded: e}
			p.renders[e.CUID] = r
			p.fetchRoom -= len(e.HTML)
			next = append(next, r)
		}
	}
	return next, nil
}

// loadOutlines reads the outlines of the notes that links with a fragment lead to and
// that the page has not looked for as embeds (ReadStore.Embedded gave the outlines of those
// past the allowance).
func (p *page) loadOutlines(ctx context.Context) error {
	var cuids []string
	seen := map[string]bool{}
	for _, r := range p.renders {
		if r == nil {
			continue
		}
		for i, t := range r.targets {
			if _, asked := p.renders[t.CUID]; t.CUID != "" && r.Links.List[i].Fragment != "" && !asked && !seen[t.CUID] {
				seen[t.CUID] = true
				cuids = append(cuids, t.CUID)
			}
		}
	}
	if len(cuids) == 0 {
		return nil
	}
	outlines, err := p.c.store.Outlines(ctx, cuids)
	if err != nil {
		return err
	}
	p.src.Outlined = cuids
	for cuid, o := range outlines {
		p.outlines[cuid] = o
		p.state.Notes = append(p.state.Notes, NoteState{CUID: cuid, Outline: o})
	}
	return nil
}

// outline is the outline of the render of cuid.
func (p *page) outline(cuid string) string {
	if r := p.renders[cuid]; r != nil {
		return r.Outline
	}
	return p.outlines[cuid]
}

// urlsOf is where r's links lead: the page of the note each names, at its fragment's
// anchor, or "" (shown as text). The first call adds them to the page's tag and expiry.
func (p *page) urlsOf(r *pageRender) []string {
	if r.urls != nil {
		return r.urls
	}
	r.urls = make([]string, len(r.Links.List))
	for i, t := range r.targets {
		if t.CUID != "" {
			r.urls[i] = p.c.href(t.CUID, p.outline(t.CUID), r.Links.List[i].Fragment)
			p.expires = earlier(p.expires, t.ExpiresAt)
			if !r.Links.List[i].Embed {
				p.link(t.CUID)
			}
		}
		p.tag.Write([]byte(r.urls[i]))
		p.tag.Write([]byte{0})
	}
	return r.urls
}

// build is html, r's render or a part of it, with r's links resolved and its embeds
// shown; path is the chain of embeds from the page's note to r.
func (p *page) build(r *pageRender, html string, path []string) string {
	urls := p.urlsOf(r)
	return p.c.renderer.ResolveLinks(html, r.Links, urls, func(i int) string {
		framed := p.embed(r, i, urls[i], path)
		if framed == "" && r.targets[i].CUID != "" {
			p.link(r.targets[i].CUID) // An embed shown as a link is a link.
		}
		return framed
	})
}

// link records cuid among the notes the page links to, once.
func (p *page) link(cuid string) {
	if !slices.Contains(p.linked, cuid) {
		p.linked = append(p.linked, cuid)
	}
}

// embed is r's embed i, leading to url, framed; "" (a link) when it cannot be shown.
func (p *page) embed(r *pageRender, i int, url string, path []string) string {
	l, t := r.Links.List[i], r.targets[i]
	e := p.renders[t.CUID]
	if e == nil || len(path) > maxEmbedDepth || slices.Contains(path, t.CUID) {
		return ""
	}
	cut, ok := p.cut(e, l.Fragment)
	title := deref(Text{Title: e.Title, Path: e.Path}.DisplayTitle())
	if title == "" {
		title = l.Target
	}
	charge := len(cut) + len(title) + len(url) + frameBytes
	if !ok || charge > p.room {
		return ""
	}
	p.room -= charge
	if !slices.Contains(p.embeds, e.CUID) {
		p.embeds = append(p.embeds, e.CUID)
		p.tag.Write([]byte(e.CUID + "\x00" + e.RenderID + "\x00"))
		p.expires = earlier(p.expires, e.ExpiresAt)
	}
	content := p.build(e, cut, append(path[:len(path):len(path)], e.CUID))
	return p.c.renderer.Frame(content, title, url)
}

// cut is a part of a render, and whether there was one.
type cut struct {
	html string
	ok   bool
}

// cut is the part of e's render that fragment names (Renderer.Cut), cut once per page.
func (p *page) cut(e *pageRender, fragment string) (string, bool) {
	key := [2]string{e.CUID, fragment}
	c, ok := p.cuts[key]
	if !ok {
		c.html, c.ok = p.c.renderer.Cut(e.HTML, e.Outline, fragment)
		p.cuts[key] = c
	}
	return c.html, c.ok
}
