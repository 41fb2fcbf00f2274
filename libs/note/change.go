package note

import (
	"context"
	"slices"
)

// Change is one change of public reads as the caches hear of it, decided here once: the
// store writes it in the change's own transaction (notedb, to libs/outbox), from where the
// change feed's relay tells every process's read cache and the edge worker purges the
// edges; the use case tells this process's cache after the commit (Notifier). What each
// of them does with it is theirs; what changed is decided only here. Its fields are those
// of outbox.Event, which it converts to.
type Change struct {
	// Note is empty for a change of every read of the account.
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

// Wide reports whether every read of the account may have changed: the change is of no
// one note (a settings change), or what the account's links lead to changed.
func (c Change) Wide() bool { return c.Note == "" || c.Links() }

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

// publishChange is the Change of publishing p: a process may have cached that its cuid
// does not exist, and the names the account's links match changed when it has any.
func publishChange(p Publication) Change {
	return Change{Account: p.AccountCUID, Note: p.CUID, Names: len(p.Names()) > 0}
}

// IndexChange is the Change of indexing names of the account's notes anew: what its
// links match may have changed, on every read of the account. RenderStore.IndexNames
// writes it for each publication it indexes.
func IndexChange(account string) Change { return Change{Account: account, Names: true} }

// unpublishChange is the Change of unpublishing v: gone, hard, and from the names the
// account's links match when it had any.
func unpublishChange(v View) Change {
	return Change{Account: v.AccountCUID, Note: v.CUID, References: true, Hard: true, Names: len(v.Names()) > 0}
}

// tell tells this process's read cache of ch, after its commit.
func (c *core) tell(ctx context.Context, ch Change) {
	if c.notifier != nil {
		c.notifier.Changed(ctx, ch)
	}
}

// sameAnchors reports whether two outlines give every link the same anchor.
func (c *core) sameAnchors(a, b string) bool {
	return c.renderer.SameAnchors(a, b)
}

func equalStrings(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}
