package routes

import (
	"errors"
	"net/url"
	"strings"
)

// A site's URLs (CONTRACT "Sites"): /@<handle>/ its home, /@<handle>/<path> a note (its
// vault path without ".md"), /@<handle>/<folder>/ a folder's listing, and the service's
// own views under /@<handle>/-/. Each segment is percent-encoded with a space as "+" and
// a literal "+" as "%2B" (Obsidian Publish's form), and a top-level folder named "-" is
// written "%2D" so that it cannot be taken for the views. The handle is lowercase.

// ViewSegment is the first segment of the service's own views of a site.
const ViewSegment = "-"

// SiteURL returns the URL under base ({base_url}, no trailing slash) of the site page
// at the vault path p in the site of handle: a note's path ("a/b.md": "/@h/a/b"), a
// folder's with a trailing "/" ("a/": its listing; "": the home). A path that is not a
// note's (".base", ".canvas") keeps its extension.
func SiteURL(base, handle, p string) string {
	p = strings.TrimSuffix(p, ".md")
	segments := strings.Split(p, "/")
	for i, s := range segments {
		segments[i] = EscapeSiteSegment(s)
	}
	if segments[0] == ViewSegment {
		segments[0] = "%2D"
	}
	return base + "/@" + handle + "/" + strings.Join(segments, "/")
}

// SiteViewURL returns the URL of one of the service's views of the site (ViewSegment):
// view is its path below "-/" ("tags/", "feed.xml"), and names, each escaped as a
// segment, follow it ("tags/" with "a", "b": "-/tags/a/b").
func SiteViewURL(base, handle, view string, names ...string) string {
	u := base + "/@" + handle + "/" + ViewSegment + "/" + view
	for i, n := range names {
		if i > 0 {
			u += "/"
		}
		u += EscapeSiteSegment(n)
	}
	return u
}

// EscapeSiteSegment is one path segment of a site URL: percent-encoded, a space as "+"
// and a "+" as "%2B".
func EscapeSiteSegment(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(url.PathEscape(s), "+", "%2B"), "%20", "+")
}

// SitePath is a request path below /@<handle>/ as ParseSitePath reads it.
type SitePath struct {
	// Handle is as the request wrote it (the canonical one is lowercase).
	Handle string
	// Segments are the decoded segments after the handle, without the empty one a
	// trailing "/" leaves; for a view (View), those after its "-".
	Segments []string
	// Folder: the path ends in "/" (a listing, or the home when Segments is empty).
	Folder bool
	// View: the path is one of the service's views (its first segment is a literal "-").
	View bool
}

// ErrSitePath is returned for a request path that names no site page: a bad escape, or
// an empty segment.
var ErrSitePath = errors.New("not a site path")

// ParseSitePath reads the escaped request path (url.URL.EscapedPath) of a site page,
// "/@<handle>/…". Each segment is decoded on its own ("+" is a space, "%2B" a "+", and an
// escaped "/" stays inside its segment), so that the path is read as its URL was built.
func ParseSitePath(escaped string) (SitePath, error) {
	rest, ok := strings.CutPrefix(escaped, "/@")
	if !ok {
		return SitePath{}, ErrSitePath
	}
	handle, rest, ok := strings.Cut(rest, "/")
	if !ok || handle == "" {
		return SitePath{}, ErrSitePath
	}
	sp := SitePath{Handle: handle, Folder: rest == "" || strings.HasSuffix(rest, "/")}
	rest = strings.TrimSuffix(rest, "/")
	if rest == "" {
		return sp, nil
	}
	raw := strings.Split(rest, "/")
	if raw[0] == ViewSegment {
		sp.View, raw = true, raw[1:]
	}
	for _, r := range raw {
		s, err := url.PathUnescape(strings.ReplaceAll(r, "+", " "))
		if err != nil || s == "" {
			return SitePath{}, ErrSitePath
		}
		sp.Segments = append(sp.Segments, s)
	}
	return sp, nil
}
