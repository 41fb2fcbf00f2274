// Package outbox is the durable record of the changes that alter public reads (table
// changes): each change writes one row, a note.Change as the domain decided it, in the
// change's own transaction (Writer), so that no change is announced that did not commit
// and none that committed goes unannounced, even when the process that made it dies
// before telling anyone.
//
// Two readers take the rows from there, each at its own pace and with its own due time
// (Reader): the change feed's relay (Relay) announces each change to every process's
// caches over libs/changefeed, and the edge's purge worker (libs/edge) purges the edges
// of it. A reader claims its due rows by moving their due time past a lease (Postgres:
// FOR UPDATE SKIP LOCKED, so two processes never take the same row; SQLite has one
// writer), and clears it once it is done with them; a row is deleted when neither reader
// has anything left of it. A claim that dies with its process is taken again when its
// lease ends: every reader gets each row at least once.
//
// The process that committed a change tells its own caches at once (Notifier, before the
// request answers, so that a writer reads what it wrote) and wakes its relay, which
// announces the row to the others within a round trip; a relay that finds a row of
// another process (one that died, or a command's) tells its own caches too.
//
// Files: outbox.go holds the rows, the writer and the readers' claims; relay.go the
// relay and the notifier of the committing process.
package outbox

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/note"
)

// Writer writes changes in the transactions that make them.
type Writer struct {
	now func() time.Time
	// origin is the change feed origin of this process (changefeed.Feed.Origin): a relay
	// tells its own caches of the rows of other origins only.
	origin string
	// edge: an edge is configured, so rows are due for its purge worker too.
	edge bool
}

// NewWriter returns the writer of a process whose change feed is origin, dating rows by
// now; edge says whether an edge is configured (SHARE_EDGE_PURGE_URLS).
func NewWriter(now func() time.Time, origin string, edge bool) *Writer {
	return &Writer{now: now, origin: origin, edge: edge}
}

// Write inserts changes through tx (the change's transaction), due at once.
func (w *Writer) Write(tx *gorm.DB, changes ...note.Change) error {
	if err := db.Run(tx, w.Writes(changes...)...); err != nil {
		return fmt.Errorf("write changes: %w", err)
	}
	return nil
}

// Writes are Write as writes of the change's db.Batch.
func (w *Writer) Writes(changes ...note.Change) []db.Write {
	if len(changes) == 0 {
		return nil
	}
	ms := w.now().UnixMilli()
	var edgeDue *int64
	if w.edge {
		edgeDue = &ms
	}
	rows := make([]Row, len(changes))
	for i, c := range changes {
		rows[i] = newRow(c)
		rows[i].Origin, rows[i].CreatedMS, rows[i].FeedDueMS, rows[i].EdgeDueMS = w.origin, ms, &ms, edgeDue
	}
	return []db.Write{func(tx *gorm.DB) *gorm.DB { return tx.Create(&rows) }}
}

// Row is a row of changes: the change, who committed it and when, and what each reader
// has left of it.
type Row struct {
	ID          int64  `gorm:"primaryKey"`
	AccountCUID string `gorm:"column:account_cuid"`
	NoteCUID    string `gorm:"column:note_cuid"`
	Refs        bool   `gorm:"column:refs"`
	Hard        bool
	Names       bool
	Anchors     bool
	Origin      string
	CreatedMS   int64
	// FeedDueMS and EdgeDueMS are when each reader may take the row (nil: never again).
	FeedDueMS *int64 `gorm:"column:feed_due_ms"`
	EdgeDueMS *int64 `gorm:"column:edge_due_ms"`
	// EdgeSends is how many times the edge worker sent it.
	EdgeSends int
}

// newRow is the row of c.
func newRow(c note.Change) Row {
	return Row{AccountCUID: c.Account, NoteCUID: c.Note, Refs: c.References, Hard: c.Hard, Names: c.Names, Anchors: c.Anchors}
}

// Change is the change r records.
func (r Row) Change() note.Change {
	return note.Change{Account: r.AccountCUID, Note: r.NoteCUID, References: r.Refs, Hard: r.Hard, Names: r.Names, Anchors: r.Anchors}
}

func (Row) TableName() string { return "changes" }

// Reader is one of the table's readers: its rows are those whose due column is set.
type Reader struct{ due string }

// The readers.
var (
	Feed = Reader{due: "feed_due_ms"}
	Edge = Reader{due: "edge_due_ms"}
)

// Claim moves up to limit of r's rows due at now to until, so that no other process
// takes them before, and returns them, oldest first.
func (r Reader) Claim(ctx context.Context, gdb *gorm.DB, now, until time.Time, limit int) ([]Row, error) {
	lock := ""
	if db.Dialect(gdb) == db.Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var rows []Row
	err := gdb.WithContext(ctx).Raw("UPDATE changes SET "+r.due+" = ? WHERE id IN "+
		"(SELECT id FROM changes WHERE "+r.due+" <= ? ORDER BY id LIMIT ?"+lock+") RETURNING *",
		until.UnixMilli(), now.UnixMilli(), limit).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("claim changes: %w", err)
	}
	return rows, nil
}

// Backlog returns how many of r's rows are due at now and when the oldest of them was
// written (zero when none is due).
func (r Reader) Backlog(ctx context.Context, gdb *gorm.DB, now time.Time) (int, time.Time, error) {
	var b struct {
		N      int
		Oldest int64
	}
	if err := gdb.WithContext(ctx).Raw("SELECT COUNT(*) AS n, COALESCE(MIN(created_ms), 0) AS oldest FROM changes WHERE "+r.due+" <= ?",
		now.UnixMilli()).Scan(&b).Error; err != nil {
		return 0, time.Time{}, fmt.Errorf("count changes: %w", err)
	}
	if b.N == 0 {
		return 0, time.Time{}, nil
	}
	return b.N, time.UnixMilli(b.Oldest), nil
}

// Done records that r is done with rows, and deletes those no reader has left.
func (r Reader) Done(ctx context.Context, gdb *gorm.DB, rows []Row) error {
	return r.update(ctx, gdb, rows, map[string]any{r.due: nil}, true)
}

// Retry makes rows due for r again at at, with the other columns set to set.
func (r Reader) Retry(ctx context.Context, gdb *gorm.DB, rows []Row, at time.Time, set map[string]any) error {
	cols := map[string]any{r.due: at.UnixMilli()}
	for k, v := range set {
		cols[k] = v
	}
	return r.update(ctx, gdb, rows, cols, false)
}

// update sets cols on rows, chunk ids a statement, and with prune deletes those rows that
// no reader has left, in the same transaction.
func (r Reader) update(ctx context.Context, gdb *gorm.DB, rows []Row, cols map[string]any, prune bool) error {
	err := gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for ids := range chunks(rows) {
			if err := tx.Model(&Row{}).Where("id IN ?", ids).Updates(cols).Error; err != nil {
				return err
			}
			if !prune {
				continue
			}
			if err := tx.Where("id IN ? AND feed_due_ms IS NULL AND edge_due_ms IS NULL", ids).Delete(&Row{}).Error; err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record changes taken: %w", err)
	}
	return nil
}

// chunk is how many ids one statement names.
const chunk = 500

// chunks yields the ids of rows, chunk at a time.
func chunks(rows []Row) func(yield func([]int64) bool) {
	return func(yield func([]int64) bool) {
		for len(rows) > 0 {
			n := min(len(rows), chunk)
			ids := make([]int64, n)
			for i, r := range rows[:n] {
				ids[i] = r.ID
			}
			if !yield(ids) {
				return
			}
			rows = rows[n:]
		}
	}
}
