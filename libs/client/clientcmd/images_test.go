package clientcmd

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// pngBytes is the smallest PNG the server's signature check takes.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")

// makeVault writes files (name → content; "->target" makes a symlink) under dir.
func makeVault(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(body, "->"); ok {
			err = os.Symlink(target, p)
		} else {
			err = os.WriteFile(p, []byte(body), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestAttachmentsResolveAsInObsidian(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "vault")
	makeVault(t, dir, map[string]string{
		".obsidian/app.json": `{"attachmentFolderPath": "Files"}`,
		"a.png":              "", "Notes/a.png": "", "Notes/Deep/a.png": "",
		"Other/b.png": "", "Other/Deeper/x/b.png": "", "Aa/c.png": "", "Ab/c.png": "",
		"Files/Diagrams/d.svg": "", "Files/e.png": "",
		"Notes/Café.png": "", "Upper/Photo.PNG": "",
		".hidden/h.png": "",
		"../secret.png": "",
		"out.png":       "->../secret.png", "in.png": "->a.png",
	})
	v, _, err := openVault(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ rule, from, target, want string }{
		{"a path from the note's folder", "Notes/n.md", "Deep/a.png", "Notes/Deep/a.png"},
		{"a path from the root", "Notes/n.md", "Other/b.png", "Other/b.png"},
		{"a path in the attachment folder", "Notes/n.md", "Diagrams/d.svg", "Files/Diagrams/d.svg"},
		{"a bare name in the note's folder first", "Notes/n.md", "a.png", "Notes/a.png"},
		{"a bare name: the shortest path", "Garden/n.md", "b.png", "Other/b.png"},
		{"a bare name: then the smallest path in byte order", "n.md", "c.png", "Aa/c.png"},
		{"a bare name in the attachment folder", "Notes/n.md", "e.png", "Files/e.png"},
		{"names compare by NFC", "Notes/n.md", norm.NFD.String("Café.png"), "Notes/Café.png"},
		{"names compare by case folding", "n.md", "photo.png", "Upper/Photo.PNG"},
		{"paths compare by case folding", "n.md", "upper/PHOTO.png", "Upper/Photo.PNG"},
		{"hidden folders hold nothing to find", "n.md", "h.png", ""},
		{"a missing file", "n.md", "gone.png", ""},
		{"a path with a folder is not looked up by name", "n.md", "Nowhere/a.png", ""},
	} {
		got, err := v.find(tc.from, tc.target)
		if tc.want == "" {
			if !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: find(%q) = %q, %v; want not found", tc.rule, tc.target, got, err)
			}
			continue
		}
		if got != tc.want || err != nil {
			t.Errorf("%s: find(%q) = %q, %v; want %q", tc.rule, tc.target, got, err, tc.want)
		}
	}
	for _, target := range []string{"../secret.png", "../../secret.png", "Notes/../../secret.png"} {
		if got, err := v.find("n.md", target); !errors.Is(err, errOutside) {
			t.Errorf("find(%q) = %q, %v; want refused as outside", target, got, err)
		}
	}
	if _, err := v.openFile(filepath.Join(dir, "out.png")); !errors.Is(err, errSymlinkOut) {
		t.Errorf("a symlink out of the vault: %v, want refused", err)
	}
	want, _ := os.Stat(filepath.Join(dir, "a.png"))
	if f, err := v.openFile(filepath.Join(dir, "in.png")); err != nil {
		t.Errorf("a symlink inside: %v; want a.png", err)
	} else if st, _ := f.Stat(); !os.SameFile(st, want) {
		t.Errorf("a symlink inside opened %s; want a.png", st.Name())
	}
	followed, _, _ := openVault(dir, true)
	if _, err := followed.openFile(filepath.Join(dir, "out.png")); err != nil {
		t.Errorf("with --follow-symlinks: %v, want the file", err)
	}
}

func TestTheAttachmentFolderIsClampedInsideTheRoot(t *testing.T) {
	for in, want := range map[string]string{"Files": "Files", "/Files/": "Files", "../../etc": "etc", "/": "", "./": "", "./here": "", `A\B`: "A/B"} {
		if got := clampFolder(in); got != want {
			t.Errorf("clampFolder(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFoldersMeanTheirNotesAndTheVaultRootIsFound(t *testing.T) {
	base := t.TempDir()
	makeVault(t, base, map[string]string{
		"vault/.obsidian/app.json": "{}",
		"vault/Home.md":            "# Home",
		"vault/Sub/Note.md":        "# Note",
		"vault/Sub/Private.md":     "---\npublish: false\n---\nsecret",
		"vault/Sub/.trash/Old.md":  "old",
		"vault/.hidden/H.md":       "hidden",
		"vault/Sub/image.png":      "",
		"plain/Top.md":             "top", "plain/In/Deep.md": "deep",
		"loose/Alone.md": "alone",
	})
	paths := func(f *finder) []string {
		var out []string
		for _, n := range f.notes {
			out = append(out, n.path)
		}
		return out
	}
	for _, tc := range []struct {
		rule, vault string
		args        []string
		want        []string
	}{
		{"a folder of a vault: paths from the .obsidian root", "", []string{"vault/Sub"}, []string{"Sub/Note.md"}},
		{"the whole vault", "", []string{"vault"}, []string{"Home.md", "Sub/Note.md"}},
		{"a folder without .obsidian is the root", "", []string{"plain"}, []string{"In/Deep.md", "Top.md"}},
		{"a note alone: its folder", "", []string{"plain/In/Deep.md"}, []string{"Deep.md"}},
		{"a note of a vault", "", []string{"vault/Sub/Note.md"}, []string{"Sub/Note.md"}},
		{"--vault", "plain", []string{"plain/In"}, []string{"In/Deep.md"}},
		{"named twice, sent once", "", []string{"vault/Sub", "vault/Sub/Note.md"}, []string{"Sub/Note.md"}},
	} {
		f := newFinder("", false)
		if tc.vault != "" {
			f.vaultFlag = filepath.Join(base, tc.vault)
		}
		for _, a := range tc.args {
			if err := f.find(filepath.Join(base, a)); err != nil {
				t.Fatalf("%s: %v", tc.rule, err)
			}
		}
		got := paths(f)
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.rule, got, tc.want)
		}
	}
	f := newFinder(filepath.Join(base, "plain"), false)
	if err := f.find(filepath.Join(base, "loose/Alone.md")); err == nil {
		t.Error("a note outside --vault was taken")
	}
}

func TestImageReferencesAreRewrittenForTheServer(t *testing.T) {
	dir := t.TempDir()
	makeVault(t, dir, map[string]string{"a.png": string(pngBytes), "sub/a.png": string(pngBytes) + "x", "my pic.png": string(pngBytes),
		"d.svg": `<svg xmlns="http://www.w3.org/2000/svg" width="120" height="60"><rect width="10" height="10"/></svg>`})
	v, _, _ := openVault(dir, false)
	for _, tc := range []struct{ rule, in, want string }{
		{"an embed becomes an image of [[name]]", "![[a.png]]", "![a.png]([[a.png]])"},
		{"an embed's text is its alt", "![[sub/a.png|A map]]", "![A map]([[a.png]])"},
		{"two files of one name get two names", "![[a.png]] ![[sub/a.png]] ![[a.png]]", "![a.png]([[a.png]]) ![a-2.png]([[a-2.png]]) ![a.png]([[a.png]])"},
		{"an embed's size is kept", "![[a.png|300x200]]", "![a.png|300x200]([[a.png]])"},
		{"an anchor is no part of the name", "![[a.png#top|40]]", "![a.png|40]([[a.png]])"},
		{"a link stays a link", "see [[a.png|the map]]", "see [[a.png|the map]]"},
		{"a Markdown image keeps its alt and title", `![alt](sub/a.png "T")`, `![alt]([[a.png]] "T")`},
		{"an angle-bracket destination", "![](<my pic.png>)", "![]([[my pic.png]])"},
		{"a percent-encoded destination", "![](my%20pic.png)", "![]([[my pic.png]])"},
		{"an SVG is its PNG, at its own width", "![[d.svg]] ![x](d.svg)", "![d.svg.png|120]([[d.svg.png]]) ![x|120]([[d.svg.png]])"},
		{"an SVG keeps a size given", "![[d.svg|60]]", "![d.svg.png|60]([[d.svg.png]])"},
		{"a note link is not an image", "[[Other note]] ![[Other note]]", "[[Other note]] ![[Other note]]"},
		{"URLs are not local", "![](https://x/a.png)", "![](https://x/a.png)"},
		{"code, math and comments are data", "`![[a.png]]`\n\n```\n![[a.png]]\n```\n\n%%![[a.png]]%%", "`![[a.png]]`\n\n```\n![[a.png]]\n```\n\n%%![[a.png]]%%"},
		{"a missing file stays as written", "![[gone.png]]", "![[gone.png]]"},
	} {
		p := &prepared{noteFile: &noteFile{path: "n.md", vault: v}, unsent: map[string]bool{}}
		if got := p.rewrite(tc.in); got != tc.want {
			t.Errorf("%s: %q became %q, want %q", tc.rule, tc.in, got, tc.want)
		}
	}
}

func TestAMissingOrRefusedFileIsAWarningNotAFailure(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "vault")
	makeVault(t, dir, map[string]string{"n.md": "![[gone.png]] ![[out.png]] ![](../up.png) ![[fake.png]] ![[ok.png]]",
		"ok.png": string(pngBytes), "fake.png": "GIF89a", "../up.png": string(pngBytes), "out.png": "->../up.png"})
	v, _, _ := openVault(dir, false)
	content, err := readNote(v, filepath.Join(dir, "n.md"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := prepare(&noteFile{file: filepath.Join(dir, "n.md"), path: "n.md", vault: v, content: content})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.images) != 1 || p.images[0].name != "ok.png" {
		t.Errorf("images %v, want ok.png alone", p.images)
	}
	all := strings.Join(p.warnings, "\n")
	for _, want := range []string{"gone.png: no such file", "out.png: a symlink that leads out of the vault", "../up.png: outside the vault", "fake.png: "} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings %q lack %q", all, want)
		}
	}
	if p.title != "n" {
		t.Errorf("title %q, want the file name", p.title)
	}
}

func TestTwoFilesOfOneNameGetTwoNames(t *testing.T) {
	taken := map[string]bool{}
	for _, tc := range [][2]string{{"a.png", "a.png"}, {"x/a.png", "a-2.png"}, {"y/a.png", "a-3.png"}, {"d.svg", "d.svg.png"}, {"b[1]|c.png", "b_1__c.png"}} {
		if got := serverName(tc[0], taken); got != tc[1] {
			t.Errorf("serverName(%q) = %q, want %q", tc[0], got, tc[1])
		}
	}
}
