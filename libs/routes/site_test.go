package routes_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/routes"
)

func TestSiteURLEscapesAsObsidianPublishDoes(t *testing.T) {
	const base = "https://share.example"
	for _, tc := range []struct{ path, want string }{
		{"", "/@h/"},
		{"C++.md", "/@h/C%2B%2B"},
		{"A+B.md", "/@h/A%2BB"},
		{"a b.md", "/@h/a+b"},
		{"日本語.md", "/@h/%E6%97%A5%E6%9C%AC%E8%AA%9E"},
		{"Foo.md", "/@h/Foo"},
		{"Foo/", "/@h/Foo/"},
		{"Foo/Bar baz.md", "/@h/Foo/Bar+baz"},
		{"-/x.md", "/@h/%2D/x"},
		{"a/-/x.md", "/@h/a/-/x"},
		{"Books.base", "/@h/Books.base"},
		{"100% #1?.md", "/@h/100%25+%231%3F"},
	} {
		got := routes.SiteURL(base, "h", tc.path)
		if got != base+tc.want {
			t.Errorf("SiteURL(%q) = %q, want %q", tc.path, got, base+tc.want)
			continue
		}
		sp, err := routes.ParseSitePath(strings.TrimPrefix(got, base))
		if err != nil || sp.View || sp.Handle != "h" {
			t.Errorf("ParseSitePath(%q) = %+v, %v", got, sp, err)
			continue
		}
		want := strings.TrimSuffix(strings.TrimSuffix(tc.path, "/"), ".md")
		if got := strings.Join(sp.Segments, "/"); got != want || sp.Folder != (tc.path == "" || strings.HasSuffix(tc.path, "/")) {
			t.Errorf("ParseSitePath(%q) = %q (folder %v), want %q", tc.want, got, sp.Folder, want)
		}
	}
}

func TestParseSitePathReadsTheEscapedPath(t *testing.T) {
	for _, tc := range []struct {
		escaped  string
		segments []string
		folder   bool
		view     bool
	}{
		{"/@Alice/", nil, true, false},
		{"/@h/C++", []string{"C  "}, false, false},
		{"/@h/C%2B%2B", []string{"C++"}, false, false},
		{"/@h/a%2Fb", []string{"a/b"}, false, false},
		{"/@h/-/tags/a/b", []string{"tags", "a", "b"}, false, true},
		{"/@h/-/tags/", []string{"tags"}, true, true},
		{"/@h/%2D/", []string{"-"}, true, false},
	} {
		sp, err := routes.ParseSitePath(tc.escaped)
		if err != nil || !slices.Equal(sp.Segments, tc.segments) || sp.Folder != tc.folder || sp.View != tc.view {
			t.Errorf("ParseSitePath(%q) = %+v, %v; want segments %q, folder %v, view %v", tc.escaped, sp, err, tc.segments, tc.folder, tc.view)
		}
	}
	for _, bad := range []string{"/s/x", "/@/x", "/@h", "/@h/a//b", "/@h/%zz", "/@h/a/%"} {
		if sp, err := routes.ParseSitePath(bad); err == nil {
			t.Errorf("ParseSitePath(%q) = %+v, want an error", bad, sp)
		}
	}
}

func TestSiteViewURL(t *testing.T) {
	if got := routes.SiteViewURL("", "h", "tags/", "a b", "c+d"); got != "/@h/-/tags/a+b/c%2Bd" {
		t.Errorf("SiteViewURL = %q", got)
	}
	if got := routes.SiteViewURL("", "h", "feed.xml"); got != "/@h/-/feed.xml" {
		t.Errorf("SiteViewURL = %q", got)
	}
}
