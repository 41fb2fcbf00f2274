package sharenote_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/render"
	"github.com/sharenote/sharenote/libs/testkit"
)

// groovyBomb is a code block that made the highlighter backtrack for seconds per view.
var groovyBomb = "```groovy\n/" + strings.Repeat(`\`, 41) + "\"\n```\n"

func TestPathologicalNotesPublishFastWithAWarning(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := start(t, b)
		acc := s.NewAccount(t, "writer")
		small := publishJSON(t, s, acc.Token, map[string]any{"content": "# Small\n\nJust a line."})

		// Small reads go on while the pathological notes are published.
		stop := testkit.Meanwhile(t, func() error {
			resp, err := http.Get(s.URL + "/s/" + small)
			if err == nil {
				_ = resp.Body.Close()
			}
			return err
		})
		for _, c := range []struct{ name, content string }{
			{"groovy", "# Bomb\n\n" + groovyBomb},
			{"linenos", "```go {linenos=true hl_lines=[1-99999]}\n" + strings.Repeat("x := 1\n", 20_000) + "```\n"},
		} {
			began := time.Now()
			var created struct {
				CUID     string
				Warnings []struct{ Code, Message, Ref string }
			}
			s.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Token: acc.Token, JSON: map[string]any{"content": c.content}}).
				Expect(t, 200, "").Decode(t, &created)
			if took := time.Since(began); took > time.Second {
				t.Errorf("%s: publish took %v, want < 1 s", c.name, took)
			}
			page := s.Do(t, testkit.Request{Method: "GET", Path: "/s/" + created.CUID}).Expect(t, 200, "")
			if max := render.MaxHTML(len(c.content)) + 64<<10; len(page.Body) > max {
				t.Errorf("%s: page of %d bytes, over the cap %d", c.name, len(page.Body), max)
			}
			if c.name == "groovy" {
				if len(created.Warnings) == 0 || created.Warnings[0].Code != "render_fallback" || created.Warnings[0].Ref == "" {
					t.Errorf("groovy: warnings %+v, want render_fallback with a ref", created.Warnings)
				}
			}
		}
		if _, slowest := stop(); slowest > 300*time.Millisecond {
			t.Errorf("a small page read took %v beside the pathological publishes", slowest)
		}
	})
}
