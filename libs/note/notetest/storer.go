// Package notetest is the contract of the note domain's store ports (Store): one suite of tests, written against
// the interface and its doc comments, that every implementation runs (notedb's store on
// Postgres and on SQLite, and the fake of the domain's tests), so that the fake is known
// to behave as the real store does. Only tests import it.
package notetest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/note"
)

// Store is every port of the use cases that store publications, which one store
// implements (notedb.Store, and the fake).
type Store interface {
	note.PublishStore
	note.UploadStore
	note.ReadStore
	note.CardStore
	note.ImageStore
	note.RenderStore
	note.HistoryStore
}

// Subject is a store under test, empty, and two accounts it holds.
type Subject struct {
	Store Store
	// Owner and Other are accounts of the store (the real store's rows need them);
	// Settings are Owner's, as FindView and PageState must read them.
	Owner, Other string
	Settings     account.Settings
}

// StorerContract runs every case of the contract as a subtest of t, each on a store that
// open makes for it alone.
func StorerContract(t *testing.T, open func(t *testing.T) Subject) {
	t.Helper()
	for _, c := range storerCases {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

// storerCases are the contract, each named after the behaviour it proves.
var storerCases = []struct {
	name string
	run  func(t *testing.T, s Subject)
}{
	{"Create keeps every field and FindView reads it with the owner's settings", createThenFindView},
	{"FindCard reads the card's fields only, in any state", findCard},
	{"Create settles its upload's reservation, and without it stores nothing", createSettlesTheReservation},
	{"a path another of the account's notes holds is taken, until it is unpublished", pathTaken},
	{"Commit stores the edit and keeps the text it replaces as a version", commitKeepsThePreviousText},
	{"Commit deletes the versions the edit prunes", commitPrunes},
	{"another account's note is not found and is left unchanged", anotherAccountsNote},
	{"an edit from an etag the note no longer has changes nothing", staleEditChangesNothing},
	{"an edit without a render keeps the stored render", editWithoutRenderKeepsTheRender},
	{"an edit writes the link index again only when it says so", editNames},
	{"Commit settles its upload and replaces the image of the same name", commitReplacesImages},
	{"Editable returns the publication, its image names and its next version number", editable},
	{"Unpublish releases the images and ends edits; FindView reads it unpublished", unpublish},
	{"Reserve refuses bytes past the quota, and Release gives them back once", reserveAndRelease},
	{"Reserve refuses images past MaxImagesPerAccount", reserveTooManyImages},
	{"FindImageView reads the image, its publication's state and the owner's settings", findImageView},
	{"List returns the owner's published notes newest first, after the cursor", list},
	{"SaveRender stores a render only over the etag and the render it was made from", saveRender},
	{"ClaimRenders takes each stale render once until its lease ends", claimRenders},
	{"ResolveNames finds the account's active notes by the keys of their names", resolveNames},
	{"Outlines returns the stored outlines by cuid", outlines},
	{"Embedded returns the account's active renders, the HTML of the smallest that fit", embedded},
	{"Embedded counts only the active renders against maxBytes", embeddedSkipsExpiredInTheAllowance},
	{"PageState reads the settings, the notes not unpublished and the active names", pageState},
	{"CursorKey returns the same key every time", cursorKey},
}

// at is the contract's clock: a round millisecond, as the stores keep times.
var at = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// quota is more than any case's images take, for the reservations that are not about the
// quota.
const quota = 1 << 30

// id returns the cuid made of c.
func id(c byte) string { return strings.Repeat(string(c), 24) }

// publication returns a rendered, active publication of account created at created,
// titled after its cuid's first letter.
func publication(account, cuid string, created time.Time) note.Publication {
	title := "Title " + cuid[:1]
	return note.Publication{CUID: cuid, AccountCUID: account,
		Text:      note.Text{Title: &title, Content: "# Héllo " + cuid[:1], Properties: map[string]any{"k": "v"}},
		CreatedAt: created, UpdatedAt: created, HTML: "<h1>Héllo</h1>", RenderVersion: 1, RenderID: "r1",
		Links: note.Links{Nonce: "n1", List: []note.Link{{Target: "B"}}}, Outline: "o1", ETag: "e1"}
}

// image returns an image of p; distinct sizes make distinct blob keys.
func image(p note.Publication, name string, size int64) note.StoredImage {
	return note.StoredImage{AccountCUID: p.AccountCUID, PublicationCUID: p.CUID, Filename: name, MediaType: "image/png",
		Size: size, SHA256: fmt.Sprintf("%064d", size), BlobKey: fmt.Sprintf("images/%s/%s/%d", p.CUID, name, size), CreatedAt: p.CreatedAt}
}

// created is the change of publishing p, as the domain says it.
func created(p note.Publication) note.Change {
	return note.Change{Account: p.AccountCUID, Note: p.CUID, Names: len(p.Names()) > 0}
}

// upload returns the id of reservation n of publication cuid.
func upload(cuid string, n int) string { return fmt.Sprintf("upload-%s-%d", cuid, n) }

// create stores p with its images, reserved first as an upload does, and fails the test
// on an error.
func (s Subject) create(t *testing.T, p note.Publication, images ...note.StoredImage) note.Publication {
	t.Helper()
	reservation := ""
	if len(images) > 0 {
		reservation = upload(p.CUID, 0)
		s.reserve(t, reservation, p.CUID, p.AccountCUID, images, nil)
	}
	if err := s.Store.Create(t.Context(), p, images, reservation, created(p)); err != nil {
		t.Fatalf("create %s: %v", p.CUID, err)
	}
	return p
}

// reserve makes reservation id of images for publication cuid and fails the test on an
// error.
func (s Subject) reserve(t *testing.T, id, cuid, account string, images []note.StoredImage, replaces []string) {
	t.Helper()
	var bytes int64
	for _, img := range images {
		bytes += img.Size
	}
	if err := s.Store.Reserve(t.Context(), note.Reservation{ID: id, Note: cuid, Account: account, Create: true, Bytes: bytes, Images: len(images), Replaces: replaces, Quota: quota, Expires: at.Add(time.Hour)}); err != nil {
		t.Fatalf("reserve %s: %v", id, err)
	}
}

// edit reads the owner's publication cuid (Editable, with images) and returns the edit
// that change makes of it at now, as an update decides one: a new etag and render, the
// text kept under the number Editable gave, the names written again, images settled
// under reservation. It fails the test on an error.
func (s Subject) edit(t *testing.T, cuid string, now time.Time, images []note.StoredImage, reservation string, change func(p *note.Publication)) note.Edit {
	t.Helper()
	cur, err := s.Store.Editable(t.Context(), note.Owned{Account: s.Owner, CUID: cuid}, images)
	if err != nil {
		t.Fatalf("editable %s: %v", cuid, err)
	}
	to := cur.Publication
	change(&to)
	to.ETag, to.UpdatedAt = fmt.Sprintf("%s-%d", cur.ETag, cur.Version), now
	return note.Edit{Owned: note.Owned{Account: s.Owner, CUID: cuid}, From: cur.ETag, To: to, Rendered: true,
		Kept: note.Version{Number: cur.Version, CreatedAt: now, Text: cur.Text}, Prune: cur.Version - note.MaxVersions,
		Names: true, Images: images, Reservation: reservation, Change: note.Change{Account: s.Owner, Note: cuid}}
}

// update commits the edit change makes of the owner's publication cuid at now (edit) and
// fails the test on an error.
func (s Subject) update(t *testing.T, cuid string, now time.Time, change func(p *note.Publication)) note.Publication {
	t.Helper()
	e := s.edit(t, cuid, now, nil, "", change)
	if err := s.Store.Commit(t.Context(), e); err != nil {
		t.Fatalf("commit %s: %v", cuid, err)
	}
	return e.To
}

// unpublish unpublishes the owner's publication cuid at now and fails the test on an
// error.
func (s Subject) unpublish(t *testing.T, cuid string, now time.Time) {
	t.Helper()
	if err := s.Store.Unpublish(t.Context(), note.Owned{Account: s.Owner, CUID: cuid}, now, note.Change{Account: s.Owner, Note: cuid, Hard: true}); err != nil {
		t.Fatalf("unpublish %s: %v", cuid, err)
	}
}

// find returns the publication cuid as FindView reads it and fails the test on an error.
func (s Subject) find(t *testing.T, cuid string) note.Publication {
	t.Helper()
	v, err := s.Store.FindView(t.Context(), cuid)
	if err != nil {
		t.Fatalf("find %s: %v", cuid, err)
	}
	return v.Publication
}

// versions returns the owner's snapshots of cuid and fails the test on an error.
func (s Subject) versions(t *testing.T, cuid string) []note.VersionMeta {
	t.Helper()
	vs, err := s.Store.Versions(t.Context(), note.Owned{Account: s.Owner, CUID: cuid})
	if err != nil {
		t.Fatalf("versions of %s: %v", cuid, err)
	}
	return vs
}

// imageNames returns the names of the images of the owner's publication cuid, as
// Editable gives them but sorted, and fails the test on an error.
func (s Subject) imageNames(t *testing.T, cuid string) []string {
	t.Helper()
	cur, err := s.Store.Editable(t.Context(), note.Owned{Account: s.Owner, CUID: cuid}, nil)
	if err != nil {
		t.Fatalf("editable %s: %v", cuid, err)
	}
	return slices.Sorted(slices.Values(cur.Images))
}

// fitQuota is the quota of fits.
const fitQuota = 1000

// fits reports whether the owner may reserve bytes more within fitQuota now, and takes
// the reservation back: the quota is how the contract sees the account's usage.
func (s Subject) fits(t *testing.T, bytes int64) bool {
	t.Helper()
	probe := fmt.Sprintf("probe-%d", bytes)
	err := s.Store.Reserve(t.Context(), note.Reservation{ID: probe, Note: id('p'), Account: s.Owner, Create: true, Bytes: bytes, Quota: fitQuota, Expires: at.Add(time.Hour)})
	switch {
	case err == nil:
		if err := s.Store.Release(t.Context(), probe); err != nil {
			t.Fatalf("release %s: %v", probe, err)
		}
		return true
	case !errors.Is(err, note.ErrQuotaExceeded):
		t.Fatalf("reserve %s: %v", probe, err)
	}
	return false
}

// diff names the fields in which got and want, structs of one type, differ, with both
// values, or returns "" when they are equal. Times are compared by Equal.
func diff(got, want any) string {
	var b strings.Builder
	var walk func(prefix string, g, w reflect.Value)
	walk = func(prefix string, g, w reflect.Value) {
		for i := range g.NumField() {
			f := g.Type().Field(i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				walk(prefix+f.Name+".", g.Field(i), w.Field(i))
				continue
			}
			if !equal(g.Field(i), w.Field(i)) {
				fmt.Fprintf(&b, "\n\t%s%s: %s, want %s", prefix, f.Name, show(g.Field(i)), show(w.Field(i)))
			}
		}
	}
	walk("", reflect.ValueOf(got), reflect.ValueOf(want))
	return b.String()
}

var timeType = reflect.TypeFor[time.Time]()

func equal(a, b reflect.Value) bool {
	switch {
	case a.Type() == timeType:
		return a.Interface().(time.Time).Equal(b.Interface().(time.Time))
	case a.Kind() == reflect.Pointer && a.Type().Elem() == timeType:
		return a.IsNil() == b.IsNil() && (a.IsNil() || equal(a.Elem(), b.Elem()))
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// show formats v with pointers followed.
func show(v reflect.Value) string {
	switch {
	case v.Kind() == reflect.Pointer && v.IsNil():
		return "nil"
	case v.Kind() == reflect.Pointer:
		return "&" + show(v.Elem())
	case v.Type() == timeType:
		return v.Interface().(time.Time).UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("%#v", v.Interface())
}
