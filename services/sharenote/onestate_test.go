package sharenote_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sharenote/sharenote/libs/testkit"
)

// TestAReadDuringAPatchSeesOneState reads a note's JSON and page while PATCHes change its
// title, content and properties together: every read shows one state, old or new,
// never parts of two.
func TestAReadDuringAPatchSeesOneState(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := start(t, b, testkit.WithEnv("SHARE_TRUSTED_PROXIES", "127.0.0.1/32"))
		acc := s.NewAccount(t, "writer")
		state := func(i int) map[string]any {
			return map[string]any{"title": fmt.Sprintf("Title %d", i), "content": fmt.Sprintf("Content %d $1 \\back", i),
				"properties": map[string]any{"state": float64(i)}, "showProperties": true}
		}
		id := publishJSON(t, s, acc.Token, state(0))

		var wg sync.WaitGroup
		done := make(chan struct{})
		var mu sync.Mutex
		reads := 0
		for reader := range 4 {
			wg.Go(func() {
				for n := 0; ; n++ {
					select {
					case <-done:
						return
					default:
					}
					// A client address of its own per request: the per-IP limit is not the subject.
					header := map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.100.%d", (reader*64+n)%250+1)}
					var got struct {
						Title, Content string
						Properties     map[string]float64
					}
					s.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + id, Header: header}).Expect(t, http.StatusOK, "").Decode(t, &got)
					var i int
					if _, err := fmt.Sscanf(got.Title, "Title %d", &i); err != nil ||
						got.Content != fmt.Sprintf("Content %d $1 \\back", i) || got.Properties["state"] != float64(i) {
						t.Errorf("note JSON mixes states: %+v", got)
						return
					}
					page := string(s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + id, Header: header}).Expect(t, http.StatusOK, "").Body)
					_, title, _ := strings.Cut(page, `<h1 class="title">`)
					if _, err := fmt.Sscanf(title, "Title %d<", &i); err != nil ||
						!strings.Contains(page, fmt.Sprintf("<p>Content %d $1 \\back</p>", i)) || !strings.Contains(page, fmt.Sprintf("<td>%d</td>", i)) {
						t.Errorf("page mixes states (title %d): %s", i, page)
						return
					}
					mu.Lock()
					reads++
					mu.Unlock()
				}
			})
		}
		for i := 1; i <= 30; i++ {
			s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + id, Token: acc.Token, JSON: state(i)}).Expect(t, http.StatusOK, "")
		}
		close(done)
		wg.Wait()
		t.Logf("%d consistent reads of JSON and page during 30 PATCHes", reads)
	})
}
