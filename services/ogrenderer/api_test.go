package ogrenderer

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharenote/sharenote/libs/account"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/noteapi"
	"github.com/sharenote/sharenote/libs/readcache"
)

// notes serves one publication of an owner with the default settings.
type notes struct {
	p note.Publication
}

func (n notes) FindCard(context.Context, string) (note.View, error) {
	return note.View{Publication: n.p, Owner: account.DefaultSettings("Ada Lovelace")}, nil
}

// BenchmarkCachedRequest measures a preview request that the read cache answers: the
// handler with an in-memory store, without the network and database of a real server.
func BenchmarkCachedRequest(b *testing.B) {
	gin.SetMode(gin.ReleaseMode)
	title := "Notes on running Postgres and Redis in a small Kubernetes cluster"
	summary := "What I learned moving a side project from one VM to a three-node cluster."
	p := note.Publication{CUID: "k3v9x2m0q8w1e7r4t6y5u2i0", AccountCUID: "a3v9x2m0q8w1e7r4t6y5u2i0",
		Text: note.Text{Title: &title, Summary: &summary}, UpdatedAt: time.Now()}
	reg := prometheus.NewRegistry()
	reads := readcache.New(64<<20, func(time.Time) bool { return true }, time.Now, reg)
	api, err := newAPI(note.NewCards(notes{p: p}, note.Config{Now: time.Now, PublicURL: "http://x"}), noteapi.NewPublic(reads, time.Now, nil), reg)
	if err != nil {
		b.Fatal(err)
	}
	r := gin.New()
	r.GET("/api/og/:file", api.Image)
	req := httptest.NewRequest(http.MethodGet, "/api/og/"+p.CUID+".png", nil)
	first := httptest.NewRecorder()
	r.ServeHTTP(first, req)
	if first.Code != http.StatusOK {
		b.Fatalf("status %d", first.Code)
	}
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
}
