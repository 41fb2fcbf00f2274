package notedb_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/notedb"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/libs/testkit/load"
)

// countingStore is the store, counting the bytes of render HTML its reads return.
type countingStore struct {
	*notedb.Store
	htmlBytes int
}

func (s *countingStore) FindView(ctx context.Context, cuid string) (note.View, error) {
	v, err := s.Store.FindView(ctx, cuid)
	s.htmlBytes += len(v.HTML)
	return v, err
}

func (s *countingStore) Embedded(ctx context.Context, account string, cuids []string, now time.Time, maxBytes int) ([]note.Embedded, error) {
	es, err := s.Store.Embedded(ctx, account, cuids, now, maxBytes)
	for _, e := range es {
		s.htmlBytes += len(e.HTML)
	}
	return es, err
}

// A page that embeds a small section of each of 20 notes of 1.8 MB reads at most its
// embed allowance of their renders (4 MiB), plus its own small render: the notes past it
// are sized without being read and show as links (issue 33: the sizing read them all).
func TestAPageOfLargeEmbedsReadsWithinItsAllowance(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := newFixture(t, b)
		store := &countingStore{Store: f.store}
		cfg := note.Config{Now: time.Now, PublicURL: "http://127.0.0.1", Quota: 1e9}
		pub := note.NewPublisher(f.store, f.store, app.Renderer{}, testkit.OpenBlobs(t, b), cfg)
		reader := note.NewReader(store, app.Renderer{}, cfg)
		ctx := context.Background()
		var page strings.Builder
		for k := range 20 {
			path := fmt.Sprintf("Big %d.md", k)
			if _, err := pub.Publish(ctx, f.owner, note.Draft{Content: load.Sectioned(fmt.Sprintf("The small part of note %d.", k), 1_800_000), Path: &path}); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&page, "![[Big %d#Small]]\n\n", k)
		}
		path := "Page.md"
		p, err := pub.Publish(ctx, f.owner, note.Draft{Content: page.String(), Path: &path})
		if err != nil {
			t.Fatal(err)
		}
		store.htmlBytes = 0
		v, err := reader.ReadPage(ctx, p.CUID)
		if err != nil {
			t.Fatal(err)
		}
		const bound = 4<<20 + 64<<10
		if store.htmlBytes > bound {
			t.Errorf("building the page read %d bytes of renders, want at most %d (the embed allowance and 64 KiB)", store.htmlBytes, bound)
		}
		if shown := strings.Count(v.HTML, "The small part of note"); shown < 2 {
			t.Errorf("the page shows %d of the small parts, want those of the renders within the allowance (2)", shown)
		}
		t.Logf("the page read %d bytes of renders and is %d bytes", store.htmlBytes, len(v.HTML))
	})
}
