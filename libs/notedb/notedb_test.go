package notedb_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/accountdb"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/notedb"
	"github.com/sharenote/sharenote/libs/testkit"
	"gorm.io/gorm"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// fixture is a store with one account whose settings are not the defaults.
type fixture struct {
	store *notedb.Store
	owner string
	now   time.Time
}

func newFixture(t *testing.T, b testkit.Backend) fixture {
	t.Helper()
	gdb := testkit.OpenDB(t, b)
	owner, _ := newAccount(t, gdb, "Ada")
	return fixture{store: notedb.New(gdb, testkit.Changes()), owner: owner, now: time.Now().UTC().Truncate(time.Millisecond)}
}

// newAccount makes an account called name whose settings are not the defaults (a dark
// theme), and returns its cuid and settings.
func newAccount(t *testing.T, gdb *gorm.DB, name string) (string, account.Settings) {
	t.Helper()
	accounts := account.NewCore(accountdb.New(gdb, testkit.Changes()), time.Now, nil)
	creds, err := accounts.CreateLicense(context.Background(), name, strings.ToLower(name)+"@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	settings := account.NewSettingsCore(accountdb.New(gdb, testkit.Changes()), 1e9, nil)
	profile, err := settings.Change(context.Background(), creds.UserCUID, account.SettingsChange{Theme: new("dark")})
	if err != nil {
		t.Fatal(err)
	}
	return creds.UserCUID, profile.Settings
}

func (f fixture) create(t *testing.T, cuid, etag string, images ...note.StoredImage) note.Publication {
	t.Helper()
	title := "A title"
	p := note.Publication{CUID: cuid, AccountCUID: f.owner,
		Text:      note.Text{Title: &title, Content: "# Hello", ShowProperties: true, Properties: map[string]any{"k": "v"}},
		CreatedAt: f.now, UpdatedAt: f.now, HTML: "<h1>Hello</h1>", RenderVersion: 1, RenderID: "r1",
		Links: note.Links{Nonce: "n1", List: []note.Link{{Target: "B"}, {Target: "C_%", Fragment: "part"}}}, ETag: etag}
	if len(images) > 0 {
		// Create settles the reservation the upload of the images made.
		var size int64
		for _, img := range images {
			size += img.Size
		}
		if err := f.store.Reserve(context.Background(), note.Reservation{ID: "upload-" + cuid, Note: cuid, Account: f.owner, Create: true, Bytes: size, Images: len(images), Quota: 1e9, Expires: f.now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.store.Create(context.Background(), p, images, "upload-"+cuid, note.Change{Account: p.AccountCUID, Note: p.CUID}); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFindViewReadsThePublicationAndItsOwnersSettings(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		want := f.create(t, "aaaaaaaaaaaaaaaaaaaaaaaa", "etag1")
		v, err := f.store.FindView(context.Background(), want.CUID)
		if err != nil {
			t.Fatal(err)
		}
		if v.CUID != want.CUID || *v.Title != *want.Title || v.Content != want.Content || v.HTML != want.HTML ||
			v.RenderVersion != 1 || v.ETag != "etag1" || v.Properties["k"] != "v" || !v.CreatedAt.Equal(want.CreatedAt) {
			t.Errorf("view = %+v, want %+v", v.Publication, want)
		}
		if v.Owner.Name != "Ada" || v.Owner.Theme != "dark" || !v.Owner.ShowAuthor {
			t.Errorf("owner settings = %+v", v.Owner)
		}
		if _, err := f.store.FindView(context.Background(), "bbbbbbbbbbbbbbbbbbbbbbbb"); !errors.Is(err, note.ErrNotFound) {
			t.Errorf("unknown cuid: %v, want ErrNotFound", err)
		}
	})
}

func TestSaveRenderKeepsNewerStates(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		p := f.create(t, "aaaaaaaaaaaaaaaaaaaaaaaa", "etag1")
		ctx := context.Background()
		for _, c := range []struct {
			name, etag, prev, html string
			version                int
			wantHTML               string
			wantVersion            int
		}{
			{"a render of a state that changed since is dropped", "other", "r1", "<p>stale</p>", 2, "<h1>Hello</h1>", 1},
			{"a render on top of a render stored since is dropped", "etag1", "r0", "<p>late</p>", 2, "<h1>Hello</h1>", 1},
			{"a newer renderer's render is stored", "etag1", "r1", "<p>v2</p>", 2, "<p>v2</p>", 2},
			{"an older renderer never overwrites a newer one", "etag1", "r1:<p>v2</p>", "<p>v1</p>", 1, "<p>v2</p>", 2},
			{"the same renderer stores a render made for new links", "etag1", "r1:<p>v2</p>", "<p>v2 linked</p>", 2, "<p>v2 linked</p>", 2},
		} {
			next := p
			next.ETag, next.HTML, next.RenderVersion, next.RenderID = c.etag, c.html, c.version, "r1:"+c.html
			next.Links = note.Links{Nonce: "n:" + c.html, List: []note.Link{{Target: "D"}}}
			if err := f.store.SaveRender(ctx, next, c.prev, note.Change{}); err != nil {
				t.Fatal(err)
			}
			v, err := f.store.FindView(ctx, p.CUID)
			if err != nil {
				t.Fatal(err)
			}
			if v.HTML != c.wantHTML || v.RenderVersion != c.wantVersion {
				t.Errorf("%s: html %q version %d, want %q %d", c.name, v.HTML, v.RenderVersion, c.wantHTML, c.wantVersion)
			}
			if v.HTML != p.HTML && (v.RenderID != "r1:"+v.HTML || v.Links.Nonce != "n:"+v.HTML || !reflect.DeepEqual(v.Links.List, []note.Link{{Target: "D"}})) {
				t.Errorf("%s: render id %q links %+v not stored with the html", c.name, v.RenderID, v.Links)
			}
			if v.HTML == p.HTML && !reflect.DeepEqual(v.Links, p.Links) {
				t.Errorf("%s: links %+v, want the first render's %+v", c.name, v.Links, p.Links)
			}
		}
	})
}

func TestResolveNamesFindsTheAuthorsActiveNotes(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		ctx := context.Background()
		titled := f.create(t, "aaaaaaaaaaaaaaaaaaaaaaaa", "e1") // "A title", no path
		pathed, expired, gone, soon := titled, titled, titled, titled
		pathed.CUID, pathed.Title, pathed.Path = "bbbbbbbbbbbbbbbbbbbbbbbb", nil, new("Garden/Ünïcode Plan.md")
		pathed.Properties = map[string]any{"aliases": []any{"Watering", `Say "hi" \ now, {maybe}`}}
		expired.CUID, expired.Title, expired.ExpiresAt = "cccccccccccccccccccccccc", new("Expired"), &f.now
		gone.CUID, gone.Title = "dddddddddddddddddddddddd", new("Gone")
		later := f.now.Add(time.Hour)
		soon.CUID, soon.Title, soon.ExpiresAt = "eeeeeeeeeeeeeeeeeeeeeeee", new("Soon"), &later
		for _, p := range []note.Publication{pathed, expired, gone, soon} {
			if err := f.store.Create(ctx, p, nil, "", note.Change{Account: p.AccountCUID, Note: p.CUID}); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.store.Unpublish(ctx, note.Owned{Account: f.owner, CUID: gone.CUID}, f.now, note.Change{}); err != nil {
			t.Fatal(err)
		}
		keys := []string{note.MatchKey("a TITLE"), note.MatchKey("expired"), note.MatchKey("gone"), note.MatchKey("soon"),
			note.MatchKey("garden/ünïcode plan.md"), note.MatchKey("ÜNÏCODE PLAN"), note.MatchKey("watering"),
			note.MatchKey(`say "HI" \ now, {maybe}`)}
		hits, err := f.store.ResolveNames(ctx, f.owner, keys, f.now)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, fmt.Sprintf("%s %d %s", h.CUID[:1], h.Kind, h.Path))
		}
		slices.Sort(got)
		want := []string{"a 4 ", "b 1 Garden/Ünïcode Plan.md", "b 2 Garden/Ünïcode Plan.md", "b 3 Garden/Ünïcode Plan.md",
			"b 3 Garden/Ünïcode Plan.md", "e 4 "}
		if !slices.Equal(got, want) {
			t.Errorf("hits %q, want %q (active notes by title, path, base name and alias; not expired or unshared)", got, want)
		}
		if hits, err := f.store.ResolveNames(ctx, "someone-else", keys, f.now); err != nil || len(hits) != 0 {
			t.Errorf("another account's names resolved %v (%v), want none", hits, err)
		}
		taken := titled
		taken.CUID, taken.Path = "ffffffffffffffffffffffff", new("GARDEN/ünïcode plan.md")
		var pathErr *note.PathTakenError
		if err := f.store.Create(ctx, taken, nil, "", note.Change{Account: taken.AccountCUID, Note: taken.CUID}); !errors.As(err, &pathErr) || pathErr.Holder != pathed.CUID {
			t.Errorf("a taken path (by match key): %v, want a PathTakenError naming %s", err, pathed.CUID)
		}
	})
}

func TestClaimRendersTakesEachStaleRenderOnce(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		ctx := context.Background()
		current := f.create(t, "aaaaaaaaaaaaaaaaaaaaaaaa", "e1") // render version 1
		old := current
		old.CUID, old.RenderVersion = "bbbbbbbbbbbbbbbbbbbbbbbb", 0
		later := old
		later.CUID, later.RenderRetry = "cccccccccccccccccccccccc", f.now.Add(time.Minute)
		gone := old
		gone.CUID = "dddddddddddddddddddddddd"
		for _, p := range []note.Publication{old, later, gone} {
			if err := f.store.Create(ctx, p, nil, "", note.Change{Account: p.AccountCUID, Note: p.CUID}); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.store.Unpublish(ctx, note.Owned{Account: f.owner, CUID: gone.CUID}, f.now, note.Change{}); err != nil {
			t.Fatal(err)
		}
		lease := f.now.Add(time.Hour)
		for _, c := range []struct {
			name    string
			version int
			now     time.Time
			want    []string
		}{
			{"renders of the current version are not taken", 1, f.now, []string{old.CUID}},
			{"a claimed render is not taken again before its lease ends", 1, f.now, nil},
			{"an older renderer's render is taken by a newer one", 2, f.now, []string{current.CUID}},
			{"a render whose retry time has come is taken, once", 2, f.now.Add(2 * time.Minute), []string{later.CUID}},
			{"after the lease, a render not stored since is taken again", 2, lease, []string{current.CUID, old.CUID, later.CUID}},
		} {
			got, err := f.store.ClaimRenders(ctx, c.version, c.now, lease, 10)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("%s: claimed %v, want %v", c.name, got, c.want)
			}
		}
		if got, err := f.store.ClaimRenders(ctx, 2, lease.Add(2*time.Hour), lease.Add(3*time.Hour), 1); err != nil || len(got) != 1 {
			t.Errorf("a claim of at most 1 took %v (%v)", got, err)
		}
	})
}

func TestListReturnsNoContent(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		f.create(t, "aaaaaaaaaaaaaaaaaaaaaaaa", "etag1")
		rows, err := f.store.List(context.Background(), f.owner, nil, 10)
		if err != nil || len(rows) != 1 {
			t.Fatalf("list: %v %v", rows, err)
		}
		if r := rows[0]; r.Content != "" || r.HTML != "" || r.Properties != nil || r.ETag != "etag1" || *r.Title != "A title" {
			t.Errorf("list row = %+v: want the listed columns only", r)
		}
	})
}

func TestFindImageViewReadsImageStateAndSettingsTogether(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		img := note.StoredImage{AccountCUID: f.owner, PublicationCUID: "aaaaaaaaaaaaaaaaaaaaaaaa", Filename: "a.png", MediaType: "image/png",
			Size: 3, SHA256: "abc", BlobKey: "images/a/1", CreatedAt: f.now}
		f.create(t, img.PublicationCUID, "etag1", img)
		iv, err := f.store.FindImageView(context.Background(), f.owner, img.PublicationCUID, "a.png")
		if err != nil {
			t.Fatal(err)
		}
		if iv.Image.Size != 3 || iv.Image.BlobKey != img.BlobKey || iv.Image.MediaType != "image/png" || iv.Note.ETag != "etag1" ||
			iv.Note.Owner.Theme != "dark" || iv.Note.Unpublished {
			t.Errorf("image view = %+v", iv)
		}
		if err := f.store.Unpublish(context.Background(), note.Owned{Account: f.owner, CUID: img.PublicationCUID}, f.now, note.Change{}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.store.FindImageView(context.Background(), f.owner, img.PublicationCUID, "a.png"); !errors.Is(err, note.ErrNotFound) {
			t.Errorf("image of an unpublished note: %v, want ErrNotFound", err)
		}
	})
}

// Publications the link index does not hold (published before it, or indexed by older
// rules) are indexed by IndexNames, a batch at a time, each once.
func TestIndexNamesIndexesWhatTheIndexLacks(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		ctx := context.Background()
		old := f.create(t, "aaaaaaaaaaaaaaaaaaaaaaaa", "e1") // "A title"
		gdb := testkit.OpenDB(t, b)
		if err := gdb.Exec("UPDATE publications SET names_version = 0").Error; err != nil {
			t.Fatal(err)
		}
		if err := gdb.Exec("DELETE FROM note_names").Error; err != nil {
			t.Fatal(err)
		}
		key := []string{note.MatchKey("a title")}
		if hits, err := f.store.ResolveNames(ctx, f.owner, key, f.now); err != nil || len(hits) != 0 {
			t.Fatalf("before indexing: %v, %v", hits, err)
		}
		accounts, err := f.store.IndexNames(ctx, 10)
		if err != nil || !slices.Equal(accounts, []string{f.owner}) {
			t.Fatalf("IndexNames = %v, %v; want the owner's account", accounts, err)
		}
		if hits, err := f.store.ResolveNames(ctx, f.owner, key, f.now); err != nil || len(hits) != 1 || hits[0].CUID != old.CUID {
			t.Errorf("after indexing: %v, %v; want the publication", hits, err)
		}
		if accounts, err := f.store.IndexNames(ctx, 10); err != nil || len(accounts) != 0 {
			t.Errorf("a second IndexNames = %v, %v; want nothing left", accounts, err)
		}
	})
}
