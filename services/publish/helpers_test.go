package publish_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"regexp"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/app"
	"github.com/sharenote/sharenote/libs/blob"
	"github.com/sharenote/sharenote/libs/note"
	"github.com/sharenote/sharenote/libs/testkit"
	"github.com/sharenote/sharenote/services/publish"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// Only the publish target is mounted, because a target imports no other target, its tests
// neither. Images are read back through the domain here and over HTTP in the images
// target's tests.
var targets = []app.Target{publish.Target}

var cuidPattern = regexp.MustCompile(`^[a-z][a-z0-9]{23}$`)

// fixture is a server with an injected clock and a handle on its database.
type fixture struct {
	*testkit.Server
	clock *testkit.Clock
	db    *gorm.DB
}

func start(t *testing.T, b testkit.Backend, opts ...testkit.Option) *fixture {
	t.Helper()
	clock := testkit.NewClock()
	s := testkit.StartServer(t, b, targets, append([]testkit.Option{testkit.WithClock(clock)}, opts...)...)
	return &fixture{Server: s, clock: clock, db: testkit.OpenDB(t, b)}
}

// markdown publishes a text/markdown body.
func (f *fixture) markdown(t testing.TB, token, body string, header map[string]string) *testkit.Response {
	t.Helper()
	return f.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Body: []byte(body),
		ContentType: "text/markdown", Token: token, Header: header})
}

// json publishes a raw application/json body, so that malformed and oddly typed bodies
// can be sent as written.
func (f *fixture) json(t testing.TB, token, body string) *testkit.Response {
	t.Helper()
	return f.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Body: []byte(body),
		ContentType: "application/json", Token: token})
}

// multipart publishes a multipart/form-data body made of parts.
func (f *fixture) multipart(t testing.TB, token string, parts ...part) *testkit.Response {
	t.Helper()
	body, contentType := multipartBody(t, parts...)
	return f.Do(t, testkit.Request{Method: "POST", Path: "/api/publish", Body: body, ContentType: contentType, Token: token})
}

// stream sends body without a Content-Length (chunked), so that a size limit can only be
// enforced while the server reads it, and validates the response like testkit's Do.
func (f *fixture) stream(t testing.TB, token, contentType string, body []byte) *testkit.Response {
	t.Helper()
	req, err := http.NewRequest("POST", f.URL+"/api/publish", io.MultiReader(bytes.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("streamed request: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	testkit.ValidateResponse(t, req, resp.StatusCode, resp.Header, b)
	return &testkit.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// published checks a 200 publish response ({cuid, url} with url = {base_url}/s/<cuid>) and
// returns the cuid.
func (f *fixture) published(t testing.TB, resp *testkit.Response) string {
	t.Helper()
	resp.Expect(t, http.StatusOK, "")
	var body struct{ CUID, URL string }
	resp.Decode(t, &body)
	if !cuidPattern.MatchString(body.CUID) {
		t.Errorf("cuid %q is not 24 lowercase [a-z0-9] starting with a letter", body.CUID)
	}
	if want := f.URL + "/s/" + body.CUID; body.URL != want {
		t.Errorf("url = %q, want %q", body.URL, want)
	}
	return body.CUID
}

// stored reads a publication back from the domain.
func (f *fixture) stored(t testing.TB, cuid string) note.Publication {
	t.Helper()
	v, err := testkit.Must(f.App.Deps().Reader()).ReadView(context.Background(), cuid)
	if err != nil {
		t.Fatalf("read %s: %v", cuid, err)
	}
	return v.Publication
}

// usage is the account's image_bytes_used.
func (f *fixture) usage(t testing.TB, acc testkit.Account) int64 {
	t.Helper()
	p, err := f.App.Deps().Settings.Get(context.Background(), acc.UserCUID)
	if err != nil {
		t.Fatal(err)
	}
	return p.Storage.ImageBytesUsed
}

// rows counts the rows of a table, optionally for one account.
func (f *fixture) rows(t testing.TB, table string, acc *testkit.Account) int64 {
	t.Helper()
	var n int64
	q := f.db.Table(table)
	if acc != nil {
		q = q.Where("account_cuid = ?", acc.UserCUID)
	}
	if err := q.Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// storedNothing fails unless the account has no publication, no image, no image bytes.
func (f *fixture) storedNothing(t testing.TB, acc testkit.Account) {
	t.Helper()
	if n := f.rows(t, "publications", &acc); n != 0 {
		t.Errorf("%d publications stored, want none", n)
	}
	if n := f.rows(t, "images", &acc); n != 0 {
		t.Errorf("%d images stored, want none", n)
	}
	if n := f.usage(t, acc); n != 0 {
		t.Errorf("image_bytes_used = %d, want 0", n)
	}
	if n := f.rows(t, "image_reservations", &acc); n != 0 {
		t.Errorf("%d quota reservations left, want none", n)
	}
	if objs := f.objects(t, acc); len(objs) != 0 {
		t.Errorf("%d objects left in the store, want none: %v", len(objs), objs)
	}
}

// objects lists the objects the store keeps for the account.
func (f *fixture) objects(t testing.TB, acc testkit.Account) []blob.Info {
	t.Helper()
	var objs []blob.Info
	if err := testkit.OpenBlobs(t, f.Backend).List(context.Background(), acc.UserCUID+"/", func(o blob.Info) error {
		objs = append(objs, o)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return objs
}

// jsonText marshals v (map keys sorted), for comparing properties.
func jsonText(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// part is one multipart part: a form field when filename is empty, else a file.
type part struct {
	name, filename, contentType string
	data                        []byte
	// disposition, when set, is the whole Content-Disposition header, as written.
	disposition string
}

func field(name, value string) part { return part{name: name, data: []byte(value)} }

// file is an image part whose form field name is its filename, as clients send them.
func file(filename, contentType string, data []byte) part {
	return part{name: filename, filename: filename, contentType: contentType, data: data}
}

var quoteEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// multipartBody encodes parts; CreatePart is used instead of CreateFormFile, which always
// declares application/octet-stream.
func multipartBody(t testing.TB, parts ...part) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		cd := p.disposition
		if cd == "" {
			cd = `form-data; name="` + quoteEscaper.Replace(p.name) + `"`
			if p.filename != "" {
				cd += `; filename="` + quoteEscaper.Replace(p.filename) + `"`
			}
		}
		h.Set("Content-Disposition", cd)
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pw.Write(p.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.FormDataContentType()
}
