package notedb_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/accountdb"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/notedb"
	"github.com/sharenote/sharenote/libs/testkit"
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
	accounts := account.NewCore(accountdb.New(gdb), time.Now, nil)
	creds, err := accounts.CreateLicense(context.Background(), "Ada", "ada@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	settings := account.NewSettingsCore(accountdb.New(gdb), 1e9, nil)
	if _, err := settings.Change(context.Background(), creds.UserCUID, account.SettingsChange{Theme: new("dark")}); err != nil {
		t.Fatal(err)
	}
	return fixture{store: notedb.New(gdb, testkit.OpenBlobs(t, b)), owner: creds.UserCUID, now: time.Now().UTC().Truncate(time.Millisecond)}
}

func (f fixture) create(t *testing.T, cuid, etag string, images ...note.StoredImage) note.Publication {
	t.Helper()
	title := "A title"
	p := note.Publication{CUID: cuid, AccountCUID: f.owner,
		Text:      note.Text{Title: &title, Content: "# Hello", ShowProperties: true, Properties: map[string]any{"k": "v"}},
		CreatedAt: f.now, UpdatedAt: f.now, HTML: "<h1>Hello</h1>", RenderVersion: 1, RenderID: "r1", Links: []string{"B", "C_%"}, ETag: etag}
	if len(images) > 0 {
		// Create settles the reservation the upload of the images made.
		var size int64
		for _, img := range images {
			size += img.Size
		}
		if err := f.store.Reserve(context.Background(), "upload-"+cuid, cuid, f.owner, true, size, len(images), nil, 1e9, f.now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.store.Create(context.Background(), p, images, "upload-"+cuid); err != nil {
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
			next.ETag, next.HTML, next.RenderVersion, next.RenderID, next.Links = c.etag, c.html, c.version, "r1:"+c.html, []string{"D"}
			if err := f.store.SaveRender(ctx, next, c.prev); err != nil {
				t.Fatal(err)
			}
			v, err := f.store.FindView(ctx, p.CUID)
			if err != nil {
				t.Fatal(err)
			}
			if v.HTML != c.wantHTML || v.RenderVersion != c.wantVersion {
				t.Errorf("%s: html %q version %d, want %q %d", c.name, v.HTML, v.RenderVersion, c.wantHTML, c.wantVersion)
			}
			if v.HTML != p.HTML && v.RenderID != "r1:"+v.HTML {
				t.Errorf("%s: render id %q not stored with the html", c.name, v.RenderID)
			}
		}
		// The stored render's links replaced the note's first ones.
		for title, want := range map[string][]string{"B": nil, "D": {p.CUID}} {
			if got, err := f.store.MarkLinkers(ctx, f.owner, []string{title}); err != nil || !slices.Equal(got, want) {
				t.Errorf("notes linking to %s: %v (%v), want %v", title, got, err, want)
			}
		}
	})
}

func TestResolveTitlesFindsTheAuthorsActiveNotes(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		ctx := context.Background()
		older := f.create(t, "aaaaaaaaaaaaaaaaaaaaaaaa", "e1")
		newer := older
		newer.CUID, newer.UpdatedAt = "bbbbbbbbbbbbbbbbbbbbbbbb", f.now.Add(time.Second)
		expired, gone := older, older
		title := "Expired"
		expired.CUID, expired.Title, expired.ExpiresAt = "cccccccccccccccccccccccc", &title, &f.now
		title2 := "Gone"
		gone.CUID, gone.Title = "dddddddddddddddddddddddd", &title2
		soon, title3, later := older, "Soon", f.now.Add(time.Hour)
		soon.CUID, soon.Title, soon.ExpiresAt = "eeeeeeeeeeeeeeeeeeeeeeee", &title3, &later
		for _, p := range []note.Publication{newer, expired, gone, soon} {
			if err := f.store.Create(ctx, p, nil, ""); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.store.Unpublish(ctx, gone.CUID, f.owner, f.now); err != nil {
			t.Fatal(err)
		}
		got, err := f.store.ResolveTitles(ctx, f.owner, []string{"A title", "Expired", "Gone", "Soon", "None"}, f.now)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]note.LinkTarget{"A title": {CUID: newer.CUID}, "Soon": {CUID: soon.CUID, ExpiresAt: &later}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("resolved %+v, want %+v (the latest updated active note of each title, with its expiry)", got, want)
		}
		if got, err := f.store.ResolveTitles(ctx, "someone-else", []string{"A title"}, f.now); err != nil || len(got) != 0 {
			t.Errorf("another account's titles resolved %v (%v), want none", got, err)
		}
	})
}

func TestMarkLinkersMarksTheNotesThatNameATitle(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		ctx := context.Background()
		p := f.create(t, "aaaaaaaaaaaaaaaaaaaaaaaa", "e1") // links to "B" and "C_%"
		for _, c := range []struct {
			titles []string
			marked bool
		}{
			{[]string{"X", "C"}, false},  // a title is matched whole
			{[]string{"X", "C_%"}, true}, // any of the titles
		} {
			got, err := f.store.MarkLinkers(ctx, f.owner, c.titles)
			if err != nil {
				t.Fatal(err)
			}
			if marked := slices.Equal(got, []string{p.CUID}); marked != c.marked {
				t.Errorf("titles %q marked %v, want marked %v", c.titles, got, c.marked)
			}
		}
		v, err := f.store.FindView(ctx, p.CUID)
		if err != nil {
			t.Fatal(err)
		}
		if v.RenderVersion != 0 || v.RenderID == p.RenderID || v.HTML != p.HTML {
			t.Errorf("marked render: version %d id %q html %q; want version 0, a new id and the old html", v.RenderVersion, v.RenderID, v.HTML)
		}
		if got, err := f.store.MarkLinkers(ctx, "someone-else", []string{"B"}); err != nil || len(got) != 0 {
			t.Errorf("another account's title marked %v (%v)", got, err)
		}
		// An unpublished note links nowhere.
		if err := f.store.Unpublish(ctx, p.CUID, f.owner, f.now); err != nil {
			t.Fatal(err)
		}
		if got, err := f.store.MarkLinkers(ctx, f.owner, []string{"B"}); err != nil || len(got) != 0 {
			t.Errorf("an unpublished note marked: %v (%v)", got, err)
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
		if err := f.store.Unpublish(context.Background(), img.PublicationCUID, f.owner, f.now); err != nil {
			t.Fatal(err)
		}
		if _, err := f.store.FindImageView(context.Background(), f.owner, img.PublicationCUID, "a.png"); !errors.Is(err, note.ErrNotFound) {
			t.Errorf("image of an unpublished note: %v, want ErrNotFound", err)
		}
	})
}
