package obsidian

import (
	"path"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Key is the match key of a name: NFC, then Unicode case folding.
func Key(s string) string { return cases.Fold().String(norm.NFC.String(s)) }

// HeadingKey is the key by which a link's heading matches a heading of a note: Obsidian
// compares headings with their special characters taken for spaces and runs of spaces
// shrunk, so that `[[Soup#Step 1 Chop & stir]]` finds "Step 1: Chop & stir".
func HeadingKey(s string) string {
	s = Key(s)
	f := strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsPunct(r) && r != '&' && r != '\'' && r != '-' && r != '_' ||
			strings.ContainsRune("^|#:%[]\\$`~<>=+", r)
	})
	return strings.Join(f, " ")
}

// index is a set of files by path, base name and alias, by match key.
type index struct {
	paths   map[string]string   // key of the path (notes without .md) → path
	names   map[string][]string // key of the base name (notes without .md) → paths
	aliases map[string][]string // key of an alias → note paths
	attach  string
}

func newIndex(v *Vault, publishedOnly bool) *index {
	ix := &index{paths: map[string]string{}, names: map[string][]string{}, aliases: map[string][]string{}, attach: v.AttachmentFolder}
	add := func(p, name string) {
		ix.paths[Key(name)] = p
		base := path.Base(name)
		ix.names[Key(base)] = append(ix.names[Key(base)], p)
	}
	for _, n := range v.Notes {
		if publishedOnly && !n.Published {
			continue
		}
		add(n.Path, strings.TrimSuffix(n.Path, path.Ext(n.Path)))
		for _, a := range n.Aliases {
			ix.aliases[Key(a)] = append(ix.aliases[Key(a)], n.Path)
		}
	}
	for _, f := range v.Files {
		add(f, norm.NFC.String(f))
	}
	return ix
}

// find resolves a link target written in the note at from; it returns "" and RuleNone when
// nothing matches.
func (ix *index) find(from, target string) (string, Rule) {
	t := strings.TrimSpace(target)
	ext := path.Ext(t)
	if strings.EqualFold(ext, ".md") {
		t, ext = t[:len(t)-3], ""
	}
	if t == "" {
		return "", RuleNone
	}
	dir := path.Dir(from)
	tries := []string{path.Join(dir, t), path.Clean("/" + t)[1:]}
	// The attachment folder is a place to look files up in, never notes.
	if ix.attach != "" && ext != "" {
		tries = append(tries, path.Join(ix.attach, t))
	}
	for _, p := range tries {
		if strings.HasPrefix(p, "../") || strings.HasPrefix(t, "../") && p != tries[0] {
			continue
		}
		if hit, ok := ix.paths[Key(p)]; ok {
			return hit, RulePath
		}
	}
	if strings.Contains(t, "/") {
		return "", RuleNone
	}
	if hit := nearest(ix.names[Key(t)], dir); hit != "" {
		return hit, RuleName
	}
	if hit := nearest(ix.aliases[Key(t)], dir); hit != "" {
		return hit, RuleAlias
	}
	return "", RuleNone
}

// nearest picks among candidates the one in dir, then the shortest path, then the smallest
// path in byte order.
func nearest(cands []string, dir string) string {
	if len(cands) == 0 {
		return ""
	}
	c := append([]string(nil), cands...)
	sort.Slice(c, func(i, j int) bool {
		ai, aj := path.Dir(c[i]) == dir, path.Dir(c[j]) == dir
		if ai != aj {
			return ai
		}
		if len(c[i]) != len(c[j]) {
			return len(c[i]) < len(c[j])
		}
		return c[i] < c[j]
	})
	return c[0]
}

// resolve fills a link's resolution: its target, then its fragment in the target.
func (v *Vault) resolve(n *Note, l *Link) {
	if l.Target == "" {
		if l.Fragment == "" {
			return
		}
		l.ResolvedPath, l.Rule, l.PublishedPath = n.Path, RuleSelf, n.Path
		if !n.Published {
			l.PublishedPath = ""
		}
	} else {
		l.ResolvedPath, l.Rule = v.all.find(n.Path, l.Target)
		l.PublishedPath, _ = v.pub.find(n.Path, l.Target)
	}
	target := v.byPath[l.ResolvedPath]
	if l.ResolvedPath != "" && target == nil {
		l.Attachment = true
		return
	}
	if target == nil || l.Fragment == "" {
		return
	}
	if id, ok := strings.CutPrefix(strings.TrimSpace(l.Fragment), "^"); ok {
		for _, b := range target.Blocks {
			if strings.EqualFold(b, id) {
				l.Block = b
			}
		}
		return
	}
	l.HeadingIndex = findHeading(target.Headings, l.Fragment)
}

// findHeading finds the heading a fragment names: "A#B" is the first heading B inside A's
// section (A's section ends at the next heading of A's level or higher).
func findHeading(hs []Heading, fragment string) int {
	at, end := -1, len(hs)
	for _, part := range strings.Split(fragment, "#") {
		k := HeadingKey(part)
		if k == "" {
			continue
		}
		found := -1
		for i := at + 1; i < end; i++ {
			if HeadingKey(hs[i].Text) == k {
				found = i
				break
			}
		}
		if found < 0 {
			return -1
		}
		at, end = found, len(hs)
		for i := found + 1; i < len(hs); i++ {
			if hs[i].Level <= hs[found].Level {
				end = i
				break
			}
		}
	}
	return at
}
