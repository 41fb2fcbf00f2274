package sharenote_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/routes"
	"github.com/sharenote/sharenote/libs/testkit"
)

// concrete fills a route's path parameters.
func concrete(path, cuid string) string {
	r := strings.NewReplacer(":cuid", cuid, ":version", "1", ":userCuid", cuid, ":noteCuid", cuid, ":filename", "a.png", ":file", cuid+".png")
	return r.Replace(path)
}

const unknownCUID = "zzzzzzzzzzzzzzzzzzzzzzzz"

func TestEveryBearerRouteAnswers401WithoutValidToken(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		clock := testkit.NewClock()
		s := start(t, b, testkit.WithClock(clock))
		expired := s.NewAccount(t, "expired").Token
		clock.Advance(2 * time.Hour)
		for _, r := range routes.Table {
			if r.Access != routes.Bearer && r.Access != routes.Mutation {
				continue
			}
			for name, token := range map[string]string{"no token": "", "unknown token": "snt_nope", "expired token": expired} {
				t.Run(r.Method+" "+r.Path+" "+name, func(t *testing.T) {
					s.Do(t, testkit.Request{Method: r.Method, Path: concrete(r.Path, unknownCUID), Token: token, JSON: map[string]string{}}).
						Expect(t, http.StatusUnauthorized, "unauthorized")
				})
			}
		}
	})
}

func TestEveryPathAnswers405ToOtherMethods(t *testing.T) {
	s := start(t, testkit.SQLiteBackend(t))
	methods := map[string][]string{}
	for _, r := range routes.Table {
		methods[r.Path] = append(methods[r.Path], r.Method)
		if r.Method == "GET" {
			methods[r.Path] = append(methods[r.Path], "HEAD")
		}
	}
	for path, allowed := range methods {
		slices.Sort(allowed)
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			if slices.Contains(allowed, m) {
				continue
			}
			t.Run(m+" "+path, func(t *testing.T) {
				resp := s.Do(t, testkit.Request{Method: m, Path: concrete(path, unknownCUID)}).Expect(t, http.StatusMethodNotAllowed, "method_not_allowed")
				if got := resp.Header.Get("Allow"); got != strings.Join(allowed, ", ") {
					t.Errorf("Allow = %q, want %q", got, strings.Join(allowed, ", "))
				}
			})
		}
	}
}

// publishWithImages publishes a note with two images over HTTP and returns its cuid and
// the images' URLs.
func publishWithImages(t *testing.T, s *testkit.Server, token string, fields map[string]string) (string, []string) {
	t.Helper()
	var created struct{ CUID string }
	s.Do(t, imagesRequest(token, fields)).Expect(t, 200, "").Decode(t, &created)
	var n struct{ Content string }
	s.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + created.CUID}).Expect(t, 200, "").Decode(t, &n)
	urls := regexp.MustCompile(`/api/images/[^)\s]+`).FindAllString(n.Content, -1)
	if len(urls) != 2 {
		t.Fatalf("content %q does not link both images", n.Content)
	}
	return created.CUID, urls
}

// imagesRequest is a multipart publish of fields with two images, one.png (108 bytes)
// and two.gif (56 bytes).
func imagesRequest(token string, fields map[string]string) testkit.Request {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	for name, data := range map[string][]byte{
		"one.png": append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{1}, 100)...),
		"two.gif": append([]byte("GIF89a"), bytes.Repeat([]byte{2}, 50)...),
	} {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+name+`"; filename="`+name+`"`)
		h.Set("Content-Type", map[bool]string{true: "image/png", false: "image/gif"}[strings.HasSuffix(name, ".png")])
		part, _ := w.CreatePart(h)
		_, _ = part.Write(data)
	}
	_ = w.Close()
	return testkit.Request{Method: "POST", Path: "/api/publish", Token: token, Body: body.Bytes(), ContentType: w.FormDataContentType()}
}

func imageBytesUsed(t *testing.T, s *testkit.Server, token string) float64 {
	t.Helper()
	var st struct {
		Storage struct {
			ImageBytesUsed float64 `json:"image_bytes_used"`
		}
	}
	s.Do(t, testkit.Request{Method: "GET", Path: "/api/user/settings", Token: token}).Expect(t, 200, "").Decode(t, &st)
	return st.Storage.ImageBytesUsed
}

func TestImageBytesThroughPublishExpireUnshare(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		clock := testkit.NewClock()
		s := start(t, b, testkit.WithClock(clock))
		acc := s.NewAccount(t, "owner")
		id, urls := publishWithImages(t, s, acc.Token, map[string]string{
			"content":    "[[one.png]] ![[two.gif]]",
			"expires_at": clock.Now().Add(time.Hour).Format(time.RFC3339),
		})
		if used := imageBytesUsed(t, s, acc.Token); used != 108+56 {
			t.Fatalf("image_bytes_used = %v after publishing, want %d", used, 108+56)
		}
		for _, u := range urls {
			s.Do(t, testkit.Request{Method: "GET", Path: u}).Expect(t, 200, "")
		}
		clock.Advance(time.Hour)
		for _, u := range urls {
			s.Do(t, testkit.Request{Method: "GET", Path: u}).Expect(t, 404, "not_found")
		}
		if used := imageBytesUsed(t, s, acc.Token); used != 164 {
			t.Fatalf("image_bytes_used = %v while expired, want 164", used)
		}
		var list struct {
			Notes []struct{ CUID, Status string }
		}
		s.Do(t, testkit.Request{Method: "GET", Path: "/api/user/notes", Token: acc.Token}).Expect(t, 200, "").Decode(t, &list)
		if len(list.Notes) != 1 || list.Notes[0].Status != "expired" {
			t.Fatalf("list = %+v, want the expired note", list)
		}
		s.Do(t, testkit.Request{Method: "POST", Path: "/api/unshare", Token: acc.Token, JSON: map[string]string{"cuid": id}}).Expect(t, 200, "")
		if used := imageBytesUsed(t, s, acc.Token); used != 0 {
			t.Fatalf("image_bytes_used = %v after unshare, want 0", used)
		}
	})
}

func TestNotFoundOnEveryNoteRoute(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		clock := testkit.NewClock()
		s := start(t, b, testkit.WithClock(clock))
		owner, stranger := s.NewAccount(t, "owner"), s.NewAccount(t, "stranger")
		live, liveImages := publishWithImages(t, s, owner.Token, map[string]string{"content": "[[one.png]] [[two.gif]]"})
		expiring, expImages := publishWithImages(t, s, owner.Token, map[string]string{"content": "[[one.png]] [[two.gif]]",
			"expires_at": clock.Now().Add(time.Minute).Format(time.RFC3339)})
		gone, goneImages := publishWithImages(t, s, owner.Token, map[string]string{"content": "[[one.png]] [[two.gif]]"})
		s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + gone, Token: owner.Token, JSON: map[string]string{"title": "v"}}).Expect(t, 200, "")
		s.Do(t, testkit.Request{Method: "POST", Path: "/api/unshare", Token: owner.Token, JSON: map[string]string{"cuid": gone}}).Expect(t, 200, "")
		clock.Advance(time.Minute)

		type call struct {
			method, path, token string
			body                any
		}
		ownerCalls := func(id, token string) []call {
			return []call{
				{"PATCH", "/api/notes/" + id, token, map[string]string{"title": "x"}},
				{"GET", "/api/notes/" + id + "/versions", token, nil},
				{"GET", "/api/notes/" + id + "/versions/1", token, nil},
				{"POST", "/api/unshare", token, map[string]string{"cuid": id}},
			}
		}
		var notFound []call
		for _, id := range []string{unknownCUID, "not-a-cuid", gone} {
			notFound = append(notFound, call{"GET", "/api/notes/" + id, "", nil})
			notFound = append(notFound, ownerCalls(id, owner.Token)...)
		}
		notFound = append(notFound, call{"GET", "/api/notes/" + expiring, "", nil})
		notFound = append(notFound, ownerCalls(live, stranger.Token)...)
		for _, u := range append(slices.Clone(expImages), goneImages...) {
			notFound = append(notFound, call{"GET", u, "", nil})
		}
		for _, u := range liveImages {
			notFound = append(notFound, call{"GET", strings.Replace(u, owner.UserCUID, stranger.UserCUID, 1), "", nil})
		}
		for _, c := range notFound {
			t.Run(c.method+" "+c.path, func(t *testing.T) {
				s.Do(t, testkit.Request{Method: c.method, Path: c.path, Token: c.token, JSON: c.body}).Expect(t, 404, "not_found")
			})
		}
		// The owner keeps managing an expired note: it stays in the list and can be
		// reactivated with PATCH (docs/api.md "Publications and their states").
		s.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + expiring + "/versions", Token: owner.Token}).Expect(t, 200, "")
		s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + expiring, Token: owner.Token, JSON: map[string]any{"expires_at": nil}}).Expect(t, 200, "")
		s.Do(t, testkit.Request{Method: "GET", Path: "/api/notes/" + expiring}).Expect(t, 200, "")
	})
}

func TestHEADAnswersLikeGETWithoutABody(t *testing.T) {
	s := start(t, testkit.SQLiteBackend(t))
	acc := s.NewAccount(t, "owner")
	id, urls := publishWithImages(t, s, acc.Token, map[string]string{"content": "[[one.png]] [[two.gif]]"})
	for _, path := range []string{"/api/notes/" + id, "/s/" + id, urls[0], "/api/og/" + id + ".png", "/api/openapi.json"} {
		// One representation for both: the client asks GET for gzip on its own, not HEAD.
		identity := map[string]string{"Accept-Encoding": "identity"}
		get := s.Do(t, testkit.Request{Method: "GET", Path: path, Header: identity}).Expect(t, 200, "")
		head := s.Do(t, testkit.Request{Method: "HEAD", Path: path, Header: identity})
		if head.Status != 200 || len(head.Body) != 0 || head.Header.Get("Content-Type") != get.Header.Get("Content-Type") ||
			head.Header.Get("ETag") != get.Header.Get("ETag") {
			t.Errorf("HEAD %s: %d, %d body bytes, %v; want GET's headers without a body", path, head.Status, len(head.Body), head.Header)
		}
	}
	head := s.Do(t, testkit.Request{Method: "HEAD", Path: "/api/user/settings", Token: acc.Token})
	if head.Status != 200 || len(head.Body) != 0 {
		t.Errorf("HEAD on a bearer GET: %d", head.Status)
	}
}

func TestNULCharactersAreRefusedOnEveryBackend(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		s := start(t, b)
		acc := s.NewAccount(t, "owner")
		for _, body := range []map[string]any{
			{"content": "a\u0000b"}, {"content": "x", "title": "t\u0000"}, {"content": "x", "summary": "\u0000"},
		} {
			s.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Token: acc.Token, JSON: body}).Expect(t, 400, "invalid_field")
		}
		var created struct{ CUID string }
		s.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Token: acc.Token, JSON: map[string]any{"content": "fine"}}).
			Expect(t, 200, "").Decode(t, &created)
		s.Do(t, testkit.Request{Method: "PATCH", Path: "/api/notes/" + created.CUID, Token: acc.Token, JSON: map[string]any{"title": "\u0000"}}).
			Expect(t, 400, "invalid_field")
		s.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Token: acc.Token, Body: []byte("nul\x00here"), ContentType: "text/markdown"}).
			Expect(t, 400, "invalid_field")
	})
}

func TestEveryResponseSaysNosniff(t *testing.T) {
	s := start(t, testkit.SQLiteBackend(t))
	acc := s.NewAccount(t, "owner")
	id, urls := publishWithImages(t, s, acc.Token, map[string]string{"content": "[[one.png]] [[two.gif]]"})
	for _, r := range []testkit.Request{
		{Method: "GET", Path: "/api/notes/" + id},
		{Method: "GET", Path: "/s/" + id},
		{Method: "GET", Path: "/api/og/" + id + ".png"},
		{Method: "GET", Path: urls[0]},
		{Method: "GET", Path: "/api/user/notes", Token: acc.Token},
		{Method: "GET", Path: "/api/user/settings"},
		{Method: "GET", Path: "/nowhere"},
		{Method: "DELETE", Path: "/api/publish"},
		{Method: "GET", Path: "/s/abcdefghijklmnopqrstuvwx"},
		{Method: "GET", Path: "/api/openapi.json"},
	} {
		if got := s.Do(t, r).Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s: X-Content-Type-Options = %q, want nosniff", r.Method, r.Path, got)
		}
	}
}
