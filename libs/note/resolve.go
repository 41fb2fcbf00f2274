package note

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// NameHit is an active publication that one of the looked-up keys names, as
// LinkStore.ResolveNames finds it in the link index.
type NameHit struct {
	Name
	CUID      string
	Path      string // "" when the publication has none
	CreatedAt time.Time
	ExpiresAt *time.Time
}

// ResolveNames is LinkStore.ResolveNames, or the same read within PublishStore.Update's
// transaction: the update's warnings must not wait for another connection (SQLite has
// one).
type ResolveNames func(ctx context.Context, accountCUID string, keys []string, now time.Time) ([]NameHit, error)

// lookup is what a link's target may match, by rule: path keys in the order they are
// tried, then the base name, alias and title keys ("" where the rule does not apply).
type lookup struct {
	paths              []string
	base, alias, title string
}

// lookupOf is the lookup of target as written in the note at from ("" for a note without
// a path): a path relative to from's folder, then from the vault root (with or without
// .md; a leading / means the root only); a base name when target has no folder; an alias
// or a title as written. A target without a folder looks up no path: as a path it would
// name the note of its base name in from's folder, then the one at the root, which the
// base-name rule picks first anyway (the same folder, then the shortest path).
func lookupOf(from, target string) lookup {
	t := strings.TrimSpace(target)
	rootOnly := strings.HasPrefix(t, "/")
	t = strings.TrimPrefix(t, "/")
	key := MatchKey(t)
	file := t
	if !strings.HasSuffix(key, ".md") {
		file += ".md"
	}
	var l lookup
	if !strings.Contains(t, "/") && !rootOnly {
		l.base = strings.TrimSuffix(key, ".md")
		l.alias, l.title = key, key
		return l
	}
	inside := func(p string) bool { return p != ".." && !strings.HasPrefix(p, "../") }
	if rel := path.Join(path.Dir(from), file); !rootOnly && from != "" && inside(rel) {
		l.paths = append(l.paths, MatchKey(rel))
	}
	if root := path.Clean(file); inside(root) && !slices.Contains(l.paths, MatchKey(root)) {
		l.paths = append(l.paths, MatchKey(root))
	}
	if !strings.Contains(t, "/") {
		l.base = strings.TrimSuffix(key, ".md")
	}
	l.alias, l.title = key, key
	return l
}

// keys are the lookup's keys, for the index query.
func (l lookup) keys() []string {
	return append(slices.Clone(l.paths), l.base, l.alias)
}

// LinkKeys are every key by which the targets of p's note links (not images) are looked
// up in the link index, each once: a publication X is named by one of p's links only if
// one of X's names has one of these keys (the backlinks of X; lookup.pick decides which).
func (p Publication) LinkKeys() []string {
	from := ""
	if p.Path != nil {
		from = *p.Path
	}
	var out []string
	for _, l := range p.Links.List {
		if l.Target == "" || isImageName(l.Target) {
			continue
		}
		for _, k := range lookupOf(from, l.Target).keys() {
			if k != "" && !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// pick is the publication a link from the note at from names among hits, by the rules in
// order: a path; a base name (the one in from's folder, then the shortest path, then the
// smallest in byte order); an alias (the oldest); a title of a note without a path (the
// oldest).
func (l lookup) pick(from string, hits map[Name][]NameHit) (NameHit, bool) {
	for _, k := range l.paths {
		if h := hits[Name{NamePath, k}]; len(h) > 0 {
			return h[0], true
		}
	}
	if h := hits[Name{NameBase, l.base}]; l.base != "" && len(h) > 0 {
		dir := MatchKey(path.Dir(from))
		return slices.MinFunc(h, func(a, b NameHit) int {
			aHere, bHere := MatchKey(path.Dir(a.Path)) == dir, MatchKey(path.Dir(b.Path)) == dir
			if aHere != bHere {
				if aHere {
					return -1
				}
				return 1
			}
			return cmp.Or(cmp.Compare(len(a.Path), len(b.Path)), strings.Compare(a.Path, b.Path))
		}), true
	}
	for _, n := range []Name{{NameAlias, l.alias}, {NameTitle, l.title}} {
		if h := hits[n]; len(h) > 0 {
			return slices.MinFunc(h, func(a, b NameHit) int {
				return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.CUID, b.CUID))
			}), true
		}
	}
	return NameHit{}, false
}

// resolveLinks finds the publication each of links names, from the note at from, with
// one call of resolve: targets[i] is links.List[i]'s, its CUID empty when none. An image's
// name never names a note.
func (c *core) resolveLinks(ctx context.Context, accountCUID, from string, links Links, resolve ResolveNames) ([]NameHit, error) {
	targets, err := c.resolveSets(ctx, accountCUID, []linkSet{{from, links}}, resolve)
	if err != nil {
		return nil, err
	}
	return targets[0], nil
}

// linkSet is the links of the note at from.
type linkSet struct {
	from  string
	links Links
}

// resolveSets is resolveLinks of several notes of the account with one call of resolve:
// targets[k][i] is what sets[k]'s link i names.
func (c *core) resolveSets(ctx context.Context, accountCUID string, sets []linkSet, resolve ResolveNames) ([][]NameHit, error) {
	lookups := make([][]lookup, len(sets))
	var keys []string
	seen := map[string]bool{}
	for k, set := range sets {
		lookups[k] = make([]lookup, len(set.links.List))
		for i, l := range set.links.List {
			if l.Target == "" || isImageName(l.Target) {
				continue
			}
			lookups[k][i] = lookupOf(set.from, l.Target)
			for _, key := range lookups[k][i].keys() {
				if key != "" && !seen[key] {
					seen[key] = true
					keys = append(keys, key)
				}
			}
		}
	}
	targets := make([][]NameHit, len(sets))
	for k, set := range sets {
		targets[k] = make([]NameHit, len(set.links.List))
	}
	if len(keys) == 0 {
		return targets, nil
	}
	hits, err := resolve(ctx, accountCUID, keys, c.now())
	if err != nil {
		return nil, fmt.Errorf("resolve links: %w", err)
	}
	byName := map[Name][]NameHit{}
	for _, h := range hits {
		byName[h.Name] = append(byName[h.Name], h)
	}
	for k, set := range sets {
		for i, l := range lookups[k] {
			if l.alias != "" {
				targets[k][i], _ = l.pick(set.from, byName)
			}
		}
	}
	return targets, nil
}
