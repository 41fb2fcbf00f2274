package note_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/blob"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/note/notetest"
	"github.com/sharenote/sharenote/libs/render"
	"github.com/sharenote/sharenote/libs/testkit"
)

// The fakes of this file stand in for the use cases' ports in the domain tests: plain
// in-memory types that keep the contracts ports.go documents, so that a test of a use
// case needs no database and runs in microseconds. Each records what a test asks about
// (renders, notifications, saved renders) and nothing more. fakeStore runs notetest.Store's
// contract (libs/note/notetest) as notedb's store does: storer_test.go.

var (
	_ notetest.Store = (*fakeStore)(nil)
	_ note.Renderer  = (*fakeRenderer)(nil)
	_ note.Notifier  = (*fakeNotifier)(nil)
	_ blob.Store     = (*fakeBlobs)(nil)
)

// harness is the use cases on fakes, with the fakes at hand.
type harness struct {
	pub      *note.Publisher
	read     *note.Reader
	images   *note.Images
	renders  *note.Renders
	history  *note.History
	store    *fakeStore
	renderer *fakeRenderer
	notifier *fakeNotifier
	clock    *testkit.Clock
	blobs    *fakeBlobs
}

// start is the fake clock's first reading: a round millisecond, as the core stores times.
var start = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

const (
	author    = "accountauthor00000000000"
	publicURL = "https://share.example"
)

// newHarness returns use cases whose clock reads start, with a quota of quota bytes.
func newHarness(t *testing.T, quota int64) *harness {
	t.Helper()
	h := &harness{store: newFakeStore(), renderer: &fakeRenderer{version: 1}, notifier: &fakeNotifier{},
		clock: testkit.ClockAt(start), blobs: &fakeBlobs{objects: map[string][]byte{}}}
	cfg := note.Config{Now: h.clock.Now, PublicURL: publicURL, Quota: quota, Notifier: h.notifier}
	h.pub = note.NewPublisher(h.store, h.store, h.renderer, h.blobs, cfg)
	h.read = note.NewReader(h.store, h.renderer, cfg)
	h.images = note.NewImages(h.store, h.blobs, cfg)
	h.renders = note.NewRenders(h.store, h.renderer, cfg)
	h.history = note.NewHistory(h.store)
	return h
}

// publish publishes content by the author with the title given ("" for none) and fails
// the test on an error.
func (h *harness) publish(t *testing.T, title, content string) note.Publication {
	t.Helper()
	d := note.Draft{Content: content}
	if title != "" {
		d.Title = &title
	}
	p, err := h.pub.Publish(context.Background(), author, d)
	if err != nil {
		t.Fatalf("publish %q: %v", title, err)
	}
	return p
}

// update patches the author's publication and fails the test on an error.
func (h *harness) update(t *testing.T, cuid string, patch note.Patch) note.Publication {
	t.Helper()
	p, err := h.pub.Update(context.Background(), author, cuid, patch)
	if err != nil {
		t.Fatalf("update %s: %v", cuid, err)
	}
	return p
}

// stored returns the publication as the store holds it.
func (h *harness) stored(t *testing.T, cuid string) note.Publication {
	t.Helper()
	v, err := h.store.FindView(context.Background(), cuid)
	if err != nil {
		t.Fatalf("find %s: %v", cuid, err)
	}
	return v.Publication
}

// settle forgets what the fakes recorded so far, so that a test counts what its step does.
func (h *harness) settle() {
	h.renderer.reset()
	h.notifier.reset()
}

// fakeRenderer renders a note as its Markdown in a paragraph, tagged with the renderer's
// version, each [[Title]] or [[Title#fragment]] a link placeholder. misses are the Miss
// results of the next renders, in order (none: MissNone).
type fakeRenderer struct {
	mu      sync.Mutex
	version int
	misses  []note.Miss
	renders []string // the Markdown of each render, in order
	// during, when set, is called once, within the next render: what another process
	// does meanwhile.
	during func()
}

var fakeLink = regexp.MustCompile(`!?\[\[([^\[\]\n]+)\]\]`)

func (r *fakeRenderer) Render(_ context.Context, _, markdown string, parsed func(note.Links)) (note.Rendered, error) {
	r.mu.Lock()
	during := r.during
	r.during = nil
	r.mu.Unlock()
	if during != nil {
		during()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.renders = append(r.renders, markdown)
	miss := note.MissNone
	if len(r.misses) > 0 {
		miss, r.misses = r.misses[0], r.misses[1:]
	}
	if miss != note.MissNone {
		return note.Rendered{HTML: "<pre>" + markdown + "</pre>", Miss: miss,
			Fallbacks: []note.Fallback{{Ref: markdown, Reason: "busy"}}}, nil
	}
	links := note.Links{Nonce: "n" + strconv.Itoa(len(r.renders))}
	html := fakeLink.ReplaceAllStringFunc(markdown, func(m string) string {
		embed := strings.HasPrefix(m, "!")
		title, frag, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(m, "!")[2:], "]]"), "#")
		links.List = append(links.List, note.Link{Target: title, Fragment: frag, Embed: embed})
		return fmt.Sprintf("{{%s:%d}}", links.Nonce, len(links.List)-1)
	})
	if parsed != nil && len(links.List) > 0 {
		parsed(links)
	}
	return note.Rendered{HTML: fmt.Sprintf(`<p data-v="%d">%s</p>`, r.version, html), Links: links,
		References: render.References(markdown)}, nil
}

// ResolveLinks makes link i an anchor to urls[i], or its title as text where urls[i] is
// "", and an embed embed(i) where that is not "".
func (r *fakeRenderer) ResolveLinks(html string, links note.Links, urls []string, embed func(int) string) string {
	for i, l := range links.List {
		to := l.Target
		if urls[i] != "" {
			to = `<a href="` + urls[i] + `">` + l.Target + `</a>`
		}
		if l.Embed && embed != nil {
			if e := embed(i); e != "" {
				to = e
			}
		}
		html = strings.Replace(html, fmt.Sprintf("{{%s:%d}}", links.Nonce, i), to, 1)
	}
	return html
}

// SameAnchors compares the outlines whole.
func (r *fakeRenderer) SameAnchors(a, b string) bool { return a == b }

// Cut is the whole render for every fragment but "missing".
func (r *fakeRenderer) Cut(html, _, fragment string) (string, bool) {
	return html, fragment != "missing"
}

// Frame is content in a div titled title.
func (r *fakeRenderer) Frame(content, title, url string) string {
	return `<div title="` + title + `" data-url="` + url + `">` + content + `</div>`
}

// Anchor leads every fragment but "missing" to an anchor of its own name.
func (r *fakeRenderer) Anchor(_, fragment string) (string, bool) {
	return fragment, fragment != "missing"
}

func (r *fakeRenderer) Version() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.version
}

// upgrade makes the renderer a newer one whose next renders miss as given.
func (r *fakeRenderer) upgrade(misses ...note.Miss) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.version++
	r.misses = misses
}

// miss makes the next renders miss as given.
func (r *fakeRenderer) miss(misses ...note.Miss) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.misses = misses
}

// rendered returns the Markdown of the renders since the last reset.
func (r *fakeRenderer) rendered() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.renders)
}

func (r *fakeRenderer) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.renders = nil
}

// fakeNotifier records the notifications, in order, as "note <cuid>" and "links <account>".
type fakeNotifier struct {
	mu    sync.Mutex
	calls []string
}

// Changed records ch as the change feed's relay tells it (libs/outbox): its note, and
// its account when every read of it may have changed.
func (n *fakeNotifier) Changed(_ context.Context, ch note.Change) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if ch.Note != "" {
		n.calls = append(n.calls, "note "+ch.Note)
	}
	if ch.Wide() {
		n.calls = append(n.calls, "links "+ch.Account)
	}
}

// count returns how many recorded notifications are call.
func (n *fakeNotifier) count(call string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := 0
	for _, c := range n.calls {
		if c == call {
			k++
		}
	}
	return k
}

// linksCalls returns the account-wide changes recorded.
func (n *fakeNotifier) linksCalls() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(n.calls), func(c string) bool { return !strings.HasPrefix(c, "links ") })
}

func (n *fakeNotifier) reset() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.calls = nil
}

// fakeBlobs is an object store in memory.
type fakeBlobs struct {
	mu      sync.Mutex
	objects map[string][]byte
}

func (b *fakeBlobs) Put(_ context.Context, key string, r io.Reader, _ int64, contentType string) (blob.Info, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		// All or nothing: a failed read leaves no object.
		return blob.Info{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.objects[key] = data
	return blob.Info{Key: key, Size: int64(len(data)), ContentType: contentType}, nil
}

func (b *fakeBlobs) Get(_ context.Context, key string, off, n int64) (io.ReadCloser, blob.Info, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	data, ok := b.objects[key]
	if !ok {
		return nil, blob.Info{}, blob.ErrNotFound
	}
	info := blob.Info{Key: key, Size: int64(len(data))}
	data = data[min(off, int64(len(data))):]
	if n >= 0 {
		data = data[:min(n, int64(len(data)))]
	}
	return io.NopCloser(bytes.NewReader(data)), info, nil
}

func (b *fakeBlobs) Stat(_ context.Context, key string) (blob.Info, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	data, ok := b.objects[key]
	if !ok {
		return blob.Info{}, blob.ErrNotFound
	}
	return blob.Info{Key: key, Size: int64(len(data))}, nil
}

func (b *fakeBlobs) Delete(_ context.Context, keys ...string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range keys {
		delete(b.objects, k)
	}
	return nil
}

func (b *fakeBlobs) List(_ context.Context, prefix string, fn func(blob.Info) error) error {
	b.mu.Lock()
	keys := slices.Sorted(maps.Keys(b.objects))
	infos := make([]blob.Info, 0, len(keys))
	for _, k := range keys {
		if strings.HasPrefix(k, prefix) {
			infos = append(infos, blob.Info{Key: k, Size: int64(len(b.objects[k]))})
		}
	}
	b.mu.Unlock()
	for _, info := range infos {
		if err := fn(info); err != nil {
			return err
		}
	}
	return nil
}

func (b *fakeBlobs) Ping(context.Context) error { return nil }

func (b *fakeBlobs) String() string { return "fake" }

func (b *fakeBlobs) keys() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Sorted(maps.Keys(b.objects))
}

// fakeStore keeps publications, their images and versions, the accounts' usage and the
// upload reservations in maps, under one mutex: every method is one transaction.
type fakeStore struct {
	mu           sync.Mutex
	pubs         map[string]*record
	settings     map[string]account.Settings
	usage        map[string]usage
	reservations map[string]reservation
	legacy       map[string][]byte
	saves        int // SaveRender calls that stored a render
	embedReads   int // Embedded calls
}

// record is a publication with what the store keeps beside it.
type record struct {
	p        note.Publication
	images   []note.StoredImage // served: not released
	versions []note.Version     // oldest first
	next     int64              // the number of the next snapshot
	names    []note.Name        // its rows of the link index
}

// usage is an account's image storage use.
type usage struct {
	bytes  int64
	images int
}

// reservation is an upload's reservation of quota.
type reservation struct {
	note, account string
	bytes         int64
	images        int
	expires       time.Time
}

func newFakeStore() *fakeStore {
	return &fakeStore{pubs: map[string]*record{}, settings: map[string]account.Settings{}, usage: map[string]usage{},
		reservations: map[string]reservation{}, legacy: map[string][]byte{}}
}

// clone copies p so that neither the caller nor the store shares its slices or maps with
// the other; warnings are not stored.
func clone(p note.Publication) note.Publication {
	p.Properties = maps.Clone(p.Properties)
	p.Links.List = slices.Clone(p.Links.List)
	p.Warnings = nil
	return p
}

// settle deletes a reservation that a commit takes over: its bytes stay in the usage,
// now as the images'.
func (s *fakeStore) settle(id string) error {
	if _, ok := s.reservations[id]; !ok {
		return note.ErrUploadExpired
	}
	delete(s.reservations, id)
	return nil
}

func (s *fakeStore) Create(_ context.Context, p note.Publication, images []note.StoredImage, reservation string, _ note.Change) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pubs[p.CUID]; ok {
		return fmt.Errorf("create %s: duplicate key", p.CUID)
	}
	if err := s.pathTaken(p); err != nil {
		return err
	}
	if len(images) > 0 {
		if err := s.settle(reservation); err != nil {
			return err
		}
	}
	s.pubs[p.CUID] = &record{p: clone(p), images: slices.Clone(images), next: 1, names: p.Names()}
	return nil
}

func (s *fakeStore) Reserve(_ context.Context, rv note.Reservation) error {
	id, noteCUID, accountCUID, create, bytes, images, replaces, quota := rv.ID, rv.Note, rv.Account, rv.Create, rv.Bytes, rv.Images, rv.Replaces, rv.Quota
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.reservations[id]
	switch {
	case create && ok:
		return fmt.Errorf("reserve %s: duplicate key", id)
	case create:
		r = reservation{note: noteCUID, account: accountCUID}
	case !ok:
		return note.ErrUploadExpired
	}
	u := s.usage[accountCUID]
	u.bytes += bytes
	u.images += images
	// The images that committing the upload releases are credited.
	var credit usage
	if rec := s.pubs[noteCUID]; rec != nil && rec.p.AccountCUID == accountCUID && len(replaces) > 0 {
		for _, img := range rec.images {
			if slices.Contains(replaces, img.Filename) {
				credit.bytes += img.Size
				credit.images++
			}
		}
	}
	if images > 0 && u.images-credit.images > note.MaxImagesPerAccount {
		return &note.TooManyImagesError{Limit: note.MaxImagesPerAccount, PerAccount: true}
	}
	if bytes > 0 && u.bytes-credit.bytes > quota {
		return note.ErrQuotaExceeded
	}
	r.bytes += bytes
	r.images += images
	r.expires = rv.Expires
	s.reservations[id] = r
	s.usage[accountCUID] = u
	return nil
}

func (s *fakeStore) Release(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.reservations[id]
	if !ok {
		return nil
	}
	u := s.usage[r.account]
	u.bytes -= r.bytes
	u.images -= r.images
	s.usage[r.account] = u
	delete(s.reservations, id)
	return nil
}

// pathTaken is a *note.PathTakenError when another of p's account's publications that is
// not unpublished has p's path (by match key), as the store's unique index finds it.
func (s *fakeStore) pathTaken(p note.Publication) error {
	if p.Path == nil {
		return nil
	}
	key := note.MatchKey(*p.Path)
	for _, rec := range s.pubs {
		q := rec.p
		if q.CUID != p.CUID && q.AccountCUID == p.AccountCUID && !q.Unpublished && q.Path != nil && note.MatchKey(*q.Path) == key {
			return &note.PathTakenError{Path: *p.Path, Holder: q.CUID}
		}
	}
	return nil
}

// owned returns the owner's published (active or expired) publication.
func (s *fakeStore) owned(n note.Owned) (*record, error) {
	rec := s.pubs[n.CUID]
	if rec == nil || rec.p.AccountCUID != n.Account || rec.p.Unpublished {
		return nil, note.ErrNotFound
	}
	return rec, nil
}

func (s *fakeStore) Editable(_ context.Context, n note.Owned, images []note.StoredImage) (note.Current, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, err := s.owned(n)
	if err != nil {
		return note.Current{}, err
	}
	return note.Current{Publication: clone(rec.p), Images: imageNames(rec, images), Version: rec.next, NamesVersion: note.NamesVersion}, nil
}

// imageNames are the names of rec's images, sorted, then those of images it has not.
func imageNames(rec *record, images []note.StoredImage) []string {
	var names []string
	for _, img := range rec.images {
		names = append(names, img.Filename)
	}
	slices.Sort(names)
	for _, img := range images {
		if !slices.Contains(names, img.Filename) {
			names = append(names, img.Filename)
		}
	}
	return names
}

func (s *fakeStore) Commit(_ context.Context, e note.Edit) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, err := s.owned(e.Owned)
	if err != nil {
		return err
	}
	if rec.p.ETag != e.From {
		return note.ErrStale
	}
	// The transaction: nothing is kept unless every check passes.
	p := clone(e.To)
	if !e.Rendered {
		setRender(&p, rec.p)
	}
	if err := s.pathTaken(p); err != nil {
		return err
	}
	if len(e.Images) > 0 {
		if err := s.settle(e.Reservation); err != nil {
			return err
		}
		u := s.usage[e.Account]
		for _, img := range e.Images {
			rec.images = slices.DeleteFunc(rec.images, func(old note.StoredImage) bool {
				if old.Filename != img.Filename {
					return false
				}
				u.bytes -= old.Size
				u.images--
				return true
			})
			rec.images = append(rec.images, img)
		}
		s.usage[e.Account] = u
	}
	rec.versions = append(rec.versions, e.Kept)
	rec.versions = slices.DeleteFunc(rec.versions, func(v note.Version) bool { return v.Number <= e.Prune })
	rec.next = e.Kept.Number + 1
	if e.Names {
		rec.names = p.Names()
	}
	rec.p = p
	return nil
}

func (s *fakeStore) Versions(_ context.Context, n note.Owned) ([]note.VersionMeta, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, err := s.owned(n)
	if err != nil {
		return nil, err
	}
	out := []note.VersionMeta{}
	for _, v := range slices.Backward(rec.versions) {
		out = append(out, note.VersionMeta{Number: v.Number, CreatedAt: v.CreatedAt, Title: v.Title, ContentBytes: len(v.Content)})
	}
	return out, nil
}

func (s *fakeStore) Version(_ context.Context, n note.Owned, number int64) (note.Version, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, err := s.owned(n)
	if err != nil {
		return note.Version{}, err
	}
	for _, v := range rec.versions {
		if v.Number == number {
			return v, nil
		}
	}
	return note.Version{}, note.ErrNotFound
}

func (s *fakeStore) Unpublish(_ context.Context, n note.Owned, now time.Time, _ note.Change) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, err := s.owned(n)
	if err != nil {
		return err
	}
	rec.p.Unpublished, rec.p.UpdatedAt = true, now
	u := s.usage[n.Account]
	for _, img := range rec.images {
		u.bytes -= img.Size
		u.images--
	}
	s.usage[n.Account] = u
	rec.images = nil
	return nil
}

func (s *fakeStore) List(_ context.Context, accountCUID string, after *note.Cursor, limit int) ([]note.Publication, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []note.Publication
	for _, rec := range s.pubs {
		p := rec.p
		if p.AccountCUID != accountCUID || p.Unpublished {
			continue
		}
		ms := p.CreatedAt.UnixMilli()
		if after != nil && (ms > after.CreatedMS || ms == after.CreatedMS && p.CUID >= after.CUID) {
			continue
		}
		out = append(out, clone(p))
	}
	slices.SortFunc(out, func(a, b note.Publication) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(b.CUID, a.CUID))
	})
	return out[:min(limit, len(out))], nil
}

func (s *fakeStore) view(rec *record) note.View {
	owner, ok := s.settings[rec.p.AccountCUID]
	if !ok {
		owner = account.DefaultSettings("Ada")
	}
	return note.View{Publication: clone(rec.p), Owner: owner}
}

func (s *fakeStore) FindView(_ context.Context, cuid string) (note.View, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.pubs[cuid]
	if rec == nil {
		return note.View{}, note.ErrNotFound
	}
	return s.view(rec), nil
}

// FindCard is FindView narrowed to the card's fields, as the store reads them.
func (s *fakeStore) FindCard(ctx context.Context, cuid string) (note.View, error) {
	v, err := s.FindView(ctx, cuid)
	p := v.Publication
	v.Publication = note.Publication{CUID: p.CUID, AccountCUID: p.AccountCUID, Unpublished: p.Unpublished,
		Text: note.Text{Title: p.Title, Summary: p.Summary, Path: p.Path, Properties: p.Properties, ExpiresAt: p.ExpiresAt}}
	return v, err
}

// SaveRender stores the render only if the publication still has p's etag, still has
// the render prev, and holds no render of a newer renderer.
func (s *fakeStore) SaveRender(_ context.Context, p note.Publication, prev string, _ note.Change) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.pubs[p.CUID]
	if rec == nil || rec.p.ETag != p.ETag || rec.p.RenderID != prev || rec.p.RenderVersion > p.RenderVersion {
		return nil
	}
	setRender(&rec.p, p)
	s.saves++
	return nil
}

// setRender sets q's render to p's.
func setRender(q *note.Publication, p note.Publication) {
	q.HTML, q.RenderVersion, q.RenderID, q.Outline = p.HTML, p.RenderVersion, p.RenderID, p.Outline
	q.Links = note.Links{Nonce: p.Links.Nonce, List: slices.Clone(p.Links.List)}
	q.RenderTries, q.RenderMisses, q.RenderRetry = p.RenderTries, p.RenderMisses, p.RenderRetry
}

// ClaimRenders claims in cuid order, so that tests see the same claims every run.
func (s *fakeStore) ClaimRenders(_ context.Context, version int, now, until time.Time, limit int) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, id := range slices.Sorted(maps.Keys(s.pubs)) {
		p := &s.pubs[id].p
		if len(out) == limit {
			break
		}
		if p.Unpublished || p.RenderVersion >= version || p.RenderRetry.After(now) {
			continue
		}
		p.RenderRetry = until
		out = append(out, id)
	}
	return out, nil
}

func (s *fakeStore) ResolveNames(ctx context.Context, accountCUID string, keys []string, now time.Time) ([]note.NameHit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resolveNames(ctx, accountCUID, keys, now)
}

// resolveNames is ResolveNames within a transaction (the mutex held): the link index is
// each active publication's Names.
func (s *fakeStore) resolveNames(_ context.Context, accountCUID string, keys []string, now time.Time) ([]note.NameHit, error) {
	var hits []note.NameHit
	for _, rec := range s.pubs {
		p := rec.p
		if p.AccountCUID != accountCUID || p.Status(now) != note.Active {
			continue
		}
		for _, n := range rec.names {
			if slices.Contains(keys, n.Key) {
				hits = append(hits, note.NameHit{Name: n, CUID: p.CUID, Path: deref(p.Path), CreatedAt: p.CreatedAt,
					ExpiresAt: p.ExpiresAt})
			}
		}
	}
	return hits, nil
}

func (s *fakeStore) IndexNames(context.Context, int) ([]string, error) { return nil, nil }

func (s *fakeStore) Outlines(_ context.Context, cuids []string) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for _, id := range cuids {
		if rec := s.pubs[id]; rec != nil {
			out[id] = rec.p.Outline
		}
	}
	return out, nil
}

func (s *fakeStore) Embedded(_ context.Context, accountCUID string, cuids []string, now time.Time, maxBytes int) ([]note.Embedded, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedReads++
	var out []note.Embedded
	for _, id := range cuids {
		if rec := s.pubs[id]; rec != nil && rec.p.AccountCUID == accountCUID && !rec.p.Unpublished {
			p := rec.p
			out = append(out, note.Embedded{CUID: p.CUID, Title: p.Title, Path: p.Path, HTML: p.HTML, Links: p.Links,
				Outline: p.Outline, ETag: p.ETag, RenderID: p.RenderID, ExpiresAt: p.ExpiresAt})
		}
	}
	// As the store: the HTML of the smallest renders that fit maxBytes together, then
	// the active ones.
	slices.SortFunc(out, func(a, b note.Embedded) int { return cmp.Or(len(a.HTML)-len(b.HTML), strings.Compare(a.CUID, b.CUID)) })
	kept := out[:0]
	for _, e := range out {
		if maxBytes -= len(e.HTML); maxBytes < 0 {
			e.HTML, e.Over = "", true
		}
		if e.ExpiresAt == nil || now.Before(*e.ExpiresAt) {
			kept = append(kept, e)
		}
	}
	return kept, nil
}

func (s *fakeStore) PageState(ctx context.Context, accountCUID string, cuids, keys []string, now time.Time) (note.PageState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, ok := s.settings[accountCUID]
	if !ok {
		owner = account.DefaultSettings("Ada")
	}
	st := note.PageState{Owner: owner}
	for _, id := range cuids {
		if rec := s.pubs[id]; rec != nil && rec.p.AccountCUID == accountCUID && !rec.p.Unpublished {
			p := rec.p
			st.Notes = append(st.Notes, note.NoteState{CUID: p.CUID, ETag: p.ETag, RenderID: p.RenderID, Outline: p.Outline, ExpiresAt: p.ExpiresAt})
		}
	}
	var err error
	st.Names, err = s.resolveNames(ctx, accountCUID, keys, now)
	return st, err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (s *fakeStore) FindImageView(_ context.Context, userCUID, noteCUID, filename string) (note.ImageView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.pubs[noteCUID]
	if rec == nil || rec.p.AccountCUID != userCUID {
		return note.ImageView{}, note.ErrNotFound
	}
	for _, img := range rec.images {
		if img.Filename == filename {
			// Of the publication, its state alone, as the store reads it.
			v := s.view(rec)
			p := v.Publication
			v.Publication = note.Publication{CUID: p.CUID, AccountCUID: p.AccountCUID, Text: note.Text{ExpiresAt: p.ExpiresAt},
				Unpublished: p.Unpublished, UpdatedAt: p.UpdatedAt, ETag: p.ETag}
			return note.ImageView{Image: img, Note: v}, nil
		}
	}
	return note.ImageView{}, note.ErrNotFound
}

func (s *fakeStore) LegacyImage(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, ok := s.legacy[key]
	if !ok {
		return nil, note.ErrNotFound
	}
	return data, nil
}

func (s *fakeStore) CursorKey(context.Context) ([]byte, error) {
	return []byte("0123456789abcdef0123456789abcdef"), nil
}

// accountUsage returns the account's image storage use.
func (s *fakeStore) accountUsage(accountCUID string) usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usage[accountCUID]
}

// reservationCount returns how many reservations are open.
func (s *fakeStore) reservationCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reservations)
}

// versionCount returns how many snapshots the publication has.
func (s *fakeStore) versionCount(cuid string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pubs[cuid].versions)
}

// reservationIDs returns the open reservations.
func (s *fakeStore) reservationIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.reservations))
}
