package clientcmd

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestWhatActsOnATerminalIsPrintedQuoted(t *testing.T) {
	for _, tc := range []struct{ rule, in, want string }{
		{"a plain name is itself", "Garden/Café.md", "Garden/Café.md"},
		{"an escape sequence", "a\x1b[2J.md", `"a\x1b[2J.md"`},
		{"a bell", "title\x07", `"title\a"`},
		{"a C1 CSI", "x\u009b31m", `"x\u009b31m"`},
		{"DEL", "x\x7f", `"x\x7f"`},
		{"a bidi override", "gnp.\u202eexe", `"gnp.\u202eexe"`},
		{"a tab or newline in a field", "a\tb\nc", `"a\tb\nc"`},
		{"a byte that is not UTF-8", "a\xffb", `"a\xffb"`},
		{"a quoted form is its own", `"a\x1b"`, `"a\x1b"`},
	} {
		if got := printable(tc.in); got != tc.want {
			t.Errorf("%s: printable(%q) = %s, want %s", tc.rule, tc.in, got, tc.want)
		}
	}
	msg := printableLines("failed: n.md: bad\nthe path \x1b]0;x\x07 is refused\n\tindented")
	if msg != "failed: n.md: bad\n\"the path \\x1b]0;x\\a is refused\"\n\tindented" {
		t.Errorf("printableLines: %q", msg)
	}
	if got := sprintf("%s: %v (%d)", "a\x1b.md", errors.New("no\x1b"), 3); got != `"a\x1b.md": "no\x1b" (3)` {
		t.Errorf("sprintf: %s", got)
	}
	b, _ := json.Marshal(map[string]string{"title": "x\u009b\u202e\x7f\x1b"})
	out := jsonPrintable(b)
	var back map[string]string
	if strings.ContainsAny(string(out), "\u009b\u202e\x7f\x1b") || json.Unmarshal(out, &back) != nil || back["title"] != "x\u009b\u202e\x7f\x1b" {
		t.Errorf("jsonPrintable: %s, read back %q", out, back["title"])
	}
}
