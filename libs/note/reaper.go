package note

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/sharenote/sharenote/libs/blob"
)

// ReapStore is what Reaper needs of storage: rows only, never an object (the Reaper owns
// the object store); notedb.Store implements it.
type ReapStore interface {
	// ClaimReleased deletes up to batch rows of released images (those of unpublished
	// notes) in one transaction and calls remove with them before it commits, so that the
	// rows stay when remove fails; it returns the rows deleted, none when no released
	// image is left. On Postgres, concurrent claims take disjoint rows (SKIP LOCKED); on
	// SQLite the first statement takes the write lock, so claims run one after the other
	// and each sees what the previous one left. remove is not called when there is none.
	ClaimReleased(ctx context.Context, batch int, remove func([]ReleasedImage) error) ([]ReleasedImage, error)
	// ReleaseExpiredReservations releases up to batch of the reservations that expired at
	// or before now, oldest first, in one transaction: it deletes them and takes their
	// bytes and images off their accounts' usage. It returns them with only Account and
	// Note set. On Postgres, concurrent releases take disjoint rows (SKIP LOCKED).
	ReleaseExpiredReservations(ctx context.Context, now time.Time, batch int) ([]Reservation, error)
	// Named returns those of keys that an image row names (its BlobKey) and those of
	// notes (publication cuids) that a reservation is for, in any order.
	Named(ctx context.Context, keys, notes []string) ([]string, error)
	// PurgeUnpublished deletes the publications unpublished at or before cutoff that no
	// image row names any more, with their version snapshots, at most batch per
	// transaction, until all were seen or maxBatches batches ran (0: no bound); see
	// Reaper.PurgeUnpublished.
	PurgeUnpublished(ctx context.Context, cutoff time.Time, batch, maxBatches int) (Purged, error)
	// LegacyBlobs lists up to limit of the images that releases before the object store
	// kept in the database (the blobs table), whose keys sort after after, in key order,
	// with their sizes and the media types of the image rows naming them ("" for none).
	LegacyBlobs(ctx context.Context, after string, limit int) ([]LegacyBlob, error)
	// LegacyImage returns the bytes that the database keeps under key; ErrNotFound when
	// it has none.
	LegacyImage(ctx context.Context, key string) ([]byte, error)
}

// ReleasedImage is an image row the reaper claimed: the key and size of its object.
type ReleasedImage struct {
	BlobKey string
	Size    int64
}

// LegacyBlob is an image that a release before the object store kept in the database
// (a row of the blobs table): its key, its size and its media type ("" when no image row
// names it).
type LegacyBlob struct {
	Key       string
	Size      int64
	MediaType string
}

// Reaper deletes what nothing needs any more: the images of unpublished notes, the
// objects of uploads that died, and unpublished notes past their retention; and copies
// the images that releases before the object store kept in the database into it.
type Reaper struct {
	store ReapStore
	blobs blob.Store
}

// NewReaper returns the Reaper over store, deleting objects from (and copying legacy
// images into) blobs; it panics without either.
func NewReaper(store ReapStore, blobs blob.Store) *Reaper {
	if store == nil {
		panic("note: the Reaper needs a store")
	}
	if blobs == nil {
		panic("note: the Reaper needs an object store")
	}
	return &Reaper{store: store, blobs: blobs}
}

// Reaping is what one Run deleted, up to where it stopped.
type Reaping struct {
	// Images are the released images deleted (Reap).
	Images Reaped
	// Expired are the reservations released with the objects stored under them
	// (ReleaseExpired).
	Expired Orphans
	// Notes are the unpublished notes purged with their versions (PurgeUnpublished).
	Notes Purged
}

// Run reaps once: it deletes released images (Reap), then releases the reservations
// expired at now with their objects (ReleaseExpired), then deletes the notes unpublished
// more than retention before now (PurgeUnpublished), which must come after their images.
// batch and maxBatches bound each step as they bound the methods. On failure it returns
// what the steps before deleted with the error.
func (r *Reaper) Run(ctx context.Context, now time.Time, retention time.Duration, batch, maxBatches int) (Reaping, error) {
	var out Reaping
	var err error
	if out.Images, err = r.Reap(ctx, batch, maxBatches); err != nil {
		return out, err
	}
	if out.Expired, err = r.ReleaseExpired(ctx, now, batch); err != nil {
		return out, err
	}
	out.Notes, err = r.PurgeUnpublished(ctx, now.Add(-retention), batch, maxBatches)
	return out, err
}

// Reaped counts what one Reap call deleted.
type Reaped struct {
	Images  int
	Bytes   int64
	Batches int
}

// Reap deletes the bytes and rows of released images (those of unpublished notes), at
// most batch images per transaction, until none is left or maxBatches batches ran (0: no
// bound). Images of active and expired notes are never released, so never touched.
//
// Each batch claims its rows by deleting them (ReapStore.ClaimReleased) and deletes their
// objects before it commits: when the object store fails the rows stay for the next run,
// and a crash between the two leaves rows whose objects are gone, which the next run
// deletes again (deleting a missing object is no error). On Postgres concurrent reapers
// take disjoint batches; on SQLite they run one after the other and each sees what the
// previous one left.
func (r *Reaper) Reap(ctx context.Context, batch, maxBatches int) (Reaped, error) {
	var total Reaped
	for maxBatches == 0 || total.Batches < maxBatches {
		images, err := r.store.ClaimReleased(ctx, batch, func(images []ReleasedImage) error {
			keys := make([]string, len(images))
			for i, img := range images {
				keys[i] = img.BlobKey
			}
			return r.blobs.Delete(ctx, keys...)
		})
		if err != nil {
			return total, err
		}
		if len(images) == 0 {
			return total, nil
		}
		total.Batches++
		total.Images += len(images)
		for _, img := range images {
			total.Bytes += img.Size
		}
	}
	return total, nil
}

// Orphans counts what ReleaseExpired or SweepOrphans deleted.
type Orphans struct {
	// Reservations are the expired reservations released.
	Reservations int
	// Objects are the objects that no image row names, deleted; Bytes, their size.
	Objects int
	Bytes   int64
}

// ReleaseExpired releases the reservations that expired at or before now (their upload
// died, or outlived UploadTimeout), at most batch per transaction, and deletes the
// objects stored under each (<account>/<note>/, as Upload.Add names them) that no image
// row names. A publish whose reservation is released can no longer commit
// (ErrUploadExpired), so nothing will name those objects.
func (r *Reaper) ReleaseExpired(ctx context.Context, now time.Time, batch int) (Orphans, error) {
	var total Orphans
	for {
		rs, err := r.store.ReleaseExpiredReservations(ctx, now, batch)
		if err != nil {
			return total, err
		}
		total.Reservations += len(rs)
		for _, res := range rs {
			if err := r.deleteOrphans(ctx, res.Account+"/"+res.Note+"/", time.Time{}, &total); err != nil {
				return total, err
			}
		}
		if len(rs) < batch {
			return total, nil
		}
	}
}

// SweepOrphans lists every object in the store and deletes those older than before
// that no image row names and no live reservation covers: objects an interrupted
// process left behind in a way ReleaseExpired does not see. It reads the whole listing,
// so it runs on demand (`sharenote reap --orphans`), not on every reap.
func (r *Reaper) SweepOrphans(ctx context.Context, before time.Time) (Orphans, error) {
	var total Orphans
	return total, r.deleteOrphans(ctx, "", before, &total)
}

// orphanBatch is how many listed objects one check against the image rows covers.
const orphanBatch = 500

// deleteOrphans deletes the objects under prefix, modified before before (zero: any),
// that no image row names and no reservation covers, adding them to total. An object's
// note is the second segment of its key (<account>/<note>/<cuid>, as Upload.Add names
// them): a reservation for that note covers it, since its publish may still commit.
func (r *Reaper) deleteOrphans(ctx context.Context, prefix string, before time.Time, total *Orphans) error {
	var listed []blob.Info
	flush := func() error {
		if len(listed) == 0 {
			return nil
		}
		keys := make([]string, len(listed))
		notes := make([]string, len(listed))
		for i, o := range listed {
			keys[i] = o.Key
			if parts := strings.SplitN(o.Key, "/", 3); len(parts) == 3 {
				notes[i] = parts[1]
			}
		}
		named, err := r.store.Named(ctx, keys, notes)
		if err != nil {
			return err
		}
		kept := make(map[string]bool, len(named))
		for _, k := range named {
			kept[k] = true
		}
		var orphans []string
		var size int64
		for i, o := range listed {
			if !kept[o.Key] && !kept[notes[i]] {
				orphans = append(orphans, o.Key)
				size += o.Size
			}
		}
		if len(orphans) > 0 {
			if err := r.blobs.Delete(ctx, orphans...); err != nil {
				return err
			}
		}
		total.Objects += len(orphans)
		total.Bytes += size
		listed = listed[:0]
		return nil
	}
	err := r.blobs.List(ctx, prefix, func(o blob.Info) error {
		if !before.IsZero() && !o.ModTime.Before(before) {
			return nil
		}
		listed = append(listed, o)
		if len(listed) == orphanBatch {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// Purged counts what one PurgeUnpublished call deleted.
type Purged struct {
	// Notes are the publications deleted; Versions, their version snapshots.
	Notes    int64
	Versions int64
	// Batches are the transactions that looked at publications, up to batch each.
	Batches int
}

// PurgeUnpublished deletes the publications unpublished at or before cutoff, with their
// version snapshots: what their authors withdrew is not kept longer than the retention
// the operator chose (SHARE_UNPUBLISHED_RETENTION). The rows are deleted rather than
// emptied, because nothing needs them once unpublished: every read of an unpublished
// publication is already 404, unpublishing it again is 404, and the chance that a new
// publication draws a purged cuid (24 characters from a CSPRNG) is negligible. A
// publication some of whose images Reap has not deleted yet is left for a later run, so
// that no image row points at a deleted publication; run Reap first (Run does).
//
// The unpublished publications without images are visited in cuid order, at most batch
// per transaction, until all were seen or maxBatches batches ran (0: no bound). It
// touches no object, so it is the store's (ReapStore.PurgeUnpublished).
func (r *Reaper) PurgeUnpublished(ctx context.Context, cutoff time.Time, batch, maxBatches int) (Purged, error) {
	return r.store.PurgeUnpublished(ctx, cutoff, batch, maxBatches)
}

// Copied counts what CopyLegacyImages did.
type Copied struct {
	// Objects were copied, Bytes in all; Skipped were in the store already.
	Objects, Skipped int
	Bytes            int64
}

// CopyLegacyImages copies the image bytes that releases before the object store kept in
// the blobs table into the store, under the same keys, in key order, batch images per
// listing and one image in memory at a time, calling progress after every batch. An
// object the store already has with the row's size is skipped, so a copy that was
// interrupted simply runs again. The rows stay: the previous release reads them while a
// rolling upgrade runs and after a rollback, and this one reads them for any image not
// copied yet (Images.OpenImage); a later release deletes them.
func (r *Reaper) CopyLegacyImages(ctx context.Context, batch int, progress func(Copied)) (Copied, error) {
	var total Copied
	after := ""
	for {
		rows, err := r.store.LegacyBlobs(ctx, after, batch)
		if err != nil {
			return total, err
		}
		for _, row := range rows {
			info, err := r.blobs.Stat(ctx, row.Key)
			switch {
			case err == nil && info.Size == row.Size:
				total.Skipped++
				continue
			case err != nil && !errors.Is(err, blob.ErrNotFound):
				return total, err
			}
			data, err := r.store.LegacyImage(ctx, row.Key)
			if err != nil {
				return total, err
			}
			if _, err := r.blobs.Put(ctx, row.Key, bytes.NewReader(data), int64(len(data)), row.MediaType); err != nil {
				return total, err
			}
			total.Objects++
			total.Bytes += int64(len(data))
		}
		if len(rows) > 0 {
			progress(total)
		}
		if len(rows) < batch {
			return total, nil
		}
		after = rows[len(rows)-1].Key
	}
}
