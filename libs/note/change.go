package note

import (
	"context"
	"slices"
)

// Change is one change of a publication as the caches hear of it, decided here once: the
// store writes it to the edge's purge outbox in the change's own transaction
// (notedb), and the core tells it to every process's read cache after the commit
// (Notifier). What each of them does with it is theirs; what changed is decided only here.
type Change struct {
	Account, Note string
	// References: what pages that link to the note show of it changed (its title, path,
	// anchors, expiry, hidden properties, or it is gone), not only its body: at the edge
	// its reference key is purged with its content key.
	References bool
	// Hard: its old reads may not be served any longer, even while the edge revalidates
	// (an expiry set or moved, properties hidden, unpublished).
	Hard bool
	// Names: the names the account's links match may resolve differently (its names
	// changed, or its expiry while it has names): every read of the account.
	Names bool
	// Anchors: the anchors links into it find changed (Renderer.SameAnchors).
	Anchors bool
}

// Links reports whether what the account's note links lead to may have changed: the
// names they match, or the anchors of the note's render.
func (c Change) Links() bool { return c.Names || c.Anchors }

// updateChange is the Change of an update from old to p (libs/edge's package doc): a body
// edit changes the note's own reads; a retitle, a move or a new outline also what links to
// it show; an expiry set or moved, or hidden properties, do so hard.
func (c *core) updateChange(old, p Publication) Change {
	was, is := old.Names(), p.Names()
	expiry := !equalTimes(old.ExpiresAt, p.ExpiresAt)
	hard := expiry || old.ShowProperties && !p.ShowProperties
	return Change{Account: p.AccountCUID, Note: p.CUID, Hard: hard,
		References: hard || !equalStrings(old.Title, p.Title) || !equalStrings(old.Path, p.Path) || old.Outline != p.Outline,
		Names:      !slices.Equal(was, is) || expiry && (len(was) > 0 || len(is) > 0),
		Anchors:    old.Outline != p.Outline && !c.sameAnchors(old.Outline, p.Outline)}
}

// renderChange is the Change of a new render p of old's content: what links to it show
// may have changed (its anchors; the links' targets' titles do not change).
func (c *core) renderChange(old, p Publication) Change {
	return Change{Account: p.AccountCUID, Note: p.CUID, References: true,
		Anchors: len(p.Names()) > 0 && !c.sameAnchors(old.Outline, p.Outline)}
}

// unpublishChange is the Change of unpublishing v: gone, hard, and from the names the
// account's links match when it had any.
func unpublishChange(v View) Change {
	return Change{Account: v.AccountCUID, Note: v.CUID, References: true, Hard: true, Names: len(v.Names()) > 0}
}

// tell tells every process's read cache of ch, after its commit.
func (c *core) tell(ctx context.Context, ch Change) {
	c.notify(ctx, ch.Note)
	if ch.Links() {
		c.notifyLinks(ctx, ch.Account)
	}
}

// sameAnchors reports whether two outlines give every link the same anchor.
func (c *core) sameAnchors(a, b string) bool {
	return c.renderer.SameAnchors(a, b)
}

func equalStrings(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}
