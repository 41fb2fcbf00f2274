package clientcmd

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rewriteAll rewrites every reference of body to its target's last path element.
func rewriteAll(body string) string {
	var b strings.Builder
	copied := 0
	for _, r := range findImageRefs(body) {
		b.WriteString(body[copied:r.start])
		b.WriteString(r.rewrite(r.target[strings.LastIndex(r.target, "/")+1:]))
		copied = r.end
	}
	return b.String() + body[copied:]
}

func TestImageReferencesAreRewrittenForTheServer(t *testing.T) {
	for _, tc := range []struct{ rule, in, want string }{
		{"an embed becomes an image of [[name]]", "![[a.png]]", "![a.png]([[a.png]])"},
		{"an embed's text is its alt", "![[sub/a.png|A map]]", "![A map]([[a.png]])"},
		{"an embed's size is not alt text", "![[a.png|300x200]]", "![a.png]([[a.png]])"},
		{"a link stays a link", "see [[a.png|the map]]", "see [the map]([[a.png]])"},
		{"a Markdown image keeps its alt and title", `![alt [x]](sub/a.png "T")`, `![alt [x]]([[a.png]] "T")`},
		{"an angle-bracket destination", "![](<my pic.png>)", "![]([[my pic.png]])"},
		{"a percent-encoded destination", "![](my%20pic.png)", "![]([[my pic.png]])"},
		{"brackets in a name are escaped in link text", "![[a].png]]", `![a\].png]([[a].png]])`},
		{"a note link is not an image", "[[Other note]] ![[Other note]]", "[[Other note]] ![[Other note]]"},
		{"URLs and absolute paths are not local", "![](https://x/a.png) ![](/a.png) ![](data:image/png;base64,AA) ![](#a)",
			"![](https://x/a.png) ![](/a.png) ![](data:image/png;base64,AA) ![](#a)"},
		{"inline code stays", "`![[a.png]]` ``![](a.png)``", "`![[a.png]]` ``![](a.png)``"},
		{"a fenced block stays", "```\n![[a.png]]\n```\n~~~md\n![](a.png)\n~~~\n![[b.png]]", "```\n![[a.png]]\n```\n~~~md\n![](a.png)\n~~~\n![b.png]([[b.png]])"},
		{"an unclosed reference stays", "![[a.png ![](a.png", "![[a.png ![](a.png"},
	} {
		if got := rewriteAll(tc.in); got != tc.want {
			t.Errorf("%s: %q became %q, want %q", tc.rule, tc.in, got, tc.want)
		}
	}
}

func TestTwoFilesOfOneNameGetTwoNames(t *testing.T) {
	taken := map[string]bool{}
	for _, want := range []string{"a.png", "a-2.png", "a-3.png"} {
		if got := uniqueName("a.png", taken); got != want {
			t.Errorf("uniqueName = %q, want %q", got, want)
		}
	}
	if got := uniqueName("a-2.png", taken); got != "a-2-2.png" {
		t.Errorf("a name already given to another file = %q, want a-2-2.png", got)
	}
}

func FuzzFindImageRefs(f *testing.F) {
	for _, s := range []string{"![[a.png|x]]", "![a](b.png \"t\")", "```\n[[a.png]]", "`x` ![](<a b.png>)", "![[](("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		end := 0
		for _, r := range findImageRefs(body) {
			if r.start < end || r.end <= r.start || r.end > len(body) || r.target == "" {
				t.Fatalf("reference %+v after %d in %q", r, end, body)
			}
			end = r.end
		}
	})
}

func TestInsideRootIsTheOneRuleOfWhatIsRead(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "vault")
	for _, name := range []string{"vault/a.png", "vault/sub/b.png", "vault/..dots.png", "secret.png"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(base, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(base, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, to := range map[string]string{"vault/in.png": "sub/b.png", "vault/out.png": "../secret.png", "vault/up": "..", "via": "vault"} {
		if err := os.Symlink(to, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	resolved := func(name string) string {
		p, err := filepath.EvalSymlinks(filepath.Join(base, name))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		rule, root, path, want string
		err                    error
	}{
		{"a file in root", root, "a.png", resolved("vault/a.png"), nil},
		{"a file below root", root, "sub/b.png", resolved("vault/sub/b.png"), nil},
		{"a name that starts with two dots", root, "..dots.png", resolved("vault/..dots.png"), nil},
		{"a symlink that stays inside", root, "in.png", resolved("vault/sub/b.png"), nil},
		{"a root reached through a symlink", filepath.Join(base, "via"), "sub/b.png", resolved("vault/sub/b.png"), nil},
		{"up a folder", root, "../secret.png", "", errOutside},
		{"down and up twice", root, "sub/../../secret.png", "", errOutside},
		{"an escaped ../", root, "..%2Fsecret.png", "", errOutside},
		{"an escaped escaped ../", root, "..%252Fsecret.png", "", errOutside},
		{"escaped dots", root, "%2E%2E/secret.png", "", errOutside},
		{"a symlink to a file outside", root, "out.png", "", errOutside},
		{"a symlink to a folder outside", root, "up/secret.png", "", errOutside},
		{"a missing file", root, "gone.png", "", os.ErrNotExist},
	} {
		got, err := insideRoot(tc.root, filepath.Join(tc.root, filepath.FromSlash(tc.path)))
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("%s: insideRoot(%s) = %q, %v; want %q, %v", tc.rule, tc.path, got, err, tc.want, tc.err)
		}
	}
}
