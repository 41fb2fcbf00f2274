package notedb_test

import (
	"context"
	"errors"
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
		CreatedAt: f.now, UpdatedAt: f.now, HTML: "<h1>Hello</h1>", RenderVersion: 1, ETag: etag}
	if len(images) > 0 {
		// Create settles the reservation the upload of the images made.
		var size int64
		for _, img := range images {
			size += img.Size
		}
		if err := f.store.Reserve(context.Background(), "upload-"+cuid, cuid, f.owner, true, size, len(images), 1e9, f.now.Add(time.Hour)); err != nil {
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
		html := func() (string, int) {
			v, err := f.store.FindView(ctx, p.CUID)
			if err != nil {
				t.Fatal(err)
			}
			return v.HTML, v.RenderVersion
		}
		for _, c := range []struct {
			name, etag, html string
			version          int
			wantHTML         string
			wantVersion      int
		}{
			{"a render of a state that changed since is dropped", "other", "<p>stale</p>", 2, "<h1>Hello</h1>", 1},
			{"a newer renderer's render is stored", "etag1", "<p>v2</p>", 2, "<p>v2</p>", 2},
			{"an older renderer never overwrites a newer one", "etag1", "<p>v1</p>", 1, "<p>v2</p>", 2},
		} {
			if err := f.store.SaveRender(ctx, p.CUID, c.etag, c.html, c.version); err != nil {
				t.Fatal(err)
			}
			if h, v := html(); h != c.wantHTML || v != c.wantVersion {
				t.Errorf("%s: html %q version %d, want %q %d", c.name, h, v, c.wantHTML, c.wantVersion)
			}
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
