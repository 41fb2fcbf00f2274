package note

import (
	"context"
	"time"
)

// VersionMeta describes one snapshot in the versions list.
type VersionMeta struct {
	Number       int64
	CreatedAt    time.Time
	Title        *string
	ContentBytes int
}

// Version is one snapshot: the publication as it was before an update.
type Version struct {
	Number    int64
	CreatedAt time.Time
	Text
}

// Versions lists the owner's snapshots of a publication, newest first.
func (c *History) Versions(ctx context.Context, accountCUID, cuid string) ([]VersionMeta, error) {
	return c.store.Versions(ctx, Owned{Account: accountCUID, CUID: cuid})
}

// Version returns one snapshot.
func (c *History) Version(ctx context.Context, accountCUID, cuid string, number int64) (Version, error) {
	return c.store.Version(ctx, Owned{Account: accountCUID, CUID: cuid}, number)
}
