package publish_test

import (
	"encoding/json"
	"testing"

	"github.com/sharenote/sharenote/libs/testkit"
)

// TestContentIsData publishes awkward text through each body format and reads it back
// byte for byte: replacement patterns ($&, $1, $`, $'), backslashes, CRLF line ends,
// non-ASCII, and image references that name no image (which stay as written).
func TestContentIsData(t *testing.T) {
	const content = "# Dollars $& $1 $` $' $$ and \\\\back\\slash\\\r\n" +
		"CRLF line\r\nünïcødé 漢字 🙂 \u00a0nbsp\r\n\r\n[[no such.png]] ![[nor.gif]] [[A note]]\r\n"
	f := start(t, testkit.SQLiteBackend(t))
	acc := f.NewAccount(t, "author")
	body, err := json.Marshal(map[string]string{"content": content})
	if err != nil {
		t.Fatal(err)
	}
	for name, resp := range map[string]*testkit.Response{
		"text/markdown":       f.markdown(t, acc.Token, content, nil),
		"application/json":    f.json(t, acc.Token, string(body)),
		"multipart/form-data": f.multipart(t, acc.Token, field("content", content)),
	} {
		if got := f.stored(t, f.published(t, resp)).Content; got != content {
			t.Errorf("%s: stored %q, want %q", name, got, content)
		}
	}
}
