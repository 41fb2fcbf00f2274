package edge

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/db"
)

// Outbox writes purges in the transactions of the changes that call for them. A nil
// Outbox (no edge configured) writes nothing.
type Outbox struct {
	now func() time.Time
}

// NewOutbox returns the outbox, dating rows by now.
func NewOutbox(now func() time.Time) *Outbox { return &Outbox{now: now} }

// On reports whether o writes rows.
func (o *Outbox) On() bool { return o != nil }

// Write inserts purges through tx (the change's transaction), due at once.
func (o *Outbox) Write(tx *gorm.DB, purges ...Purge) error {
	if err := db.Run(tx, o.Writes(purges...)...); err != nil {
		return fmt.Errorf("write edge purges: %w", err)
	}
	return nil
}

// Writes are Write as writes of the change's db.Batch: none when o writes nothing.
func (o *Outbox) Writes(purges ...Purge) []db.Write {
	if o == nil || len(purges) == 0 {
		return nil
	}
	ms := o.now().UnixMilli()
	rows := make([]row, len(purges))
	for i, p := range purges {
		rows[i] = row{AccountCUID: p.Account, NoteCUID: p.Note, Scope: p.Scope, Hard: p.Hard, CreatedMS: ms, DueMS: ms}
	}
	return []db.Write{func(tx *gorm.DB) *gorm.DB { return tx.Create(&rows) }}
}

// row is a row of edge_purges.
type row struct {
	ID          int64  `gorm:"primaryKey"`
	AccountCUID string `gorm:"column:account_cuid"`
	NoteCUID    string `gorm:"column:note_cuid"`
	Scope       Scope
	Hard        bool
	CreatedMS   int64
	DueMS       int64
	Sends       int
}

func (row) TableName() string { return "edge_purges" }

// all is a claim's limit that takes every due row.
const all = 1 << 30

// claim moves up to limit rows due at now to until, so that no other worker takes them
// before, and returns them. On Postgres the rows are picked with FOR UPDATE SKIP LOCKED:
// a row another worker is claiming is skipped, not waited for; SQLite has one writer.
func claim(ctx context.Context, gdb *gorm.DB, now, until time.Time, limit int) ([]row, error) {
	lock := ""
	if db.Dialect(gdb) == db.Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var rows []row
	err := gdb.WithContext(ctx).Raw("UPDATE edge_purges SET due_ms = ? WHERE id IN "+
		"(SELECT id FROM edge_purges WHERE due_ms <= ? ORDER BY id LIMIT ?"+lock+") "+
		"RETURNING id, account_cuid, note_cuid, scope, hard, created_ms, due_ms, sends",
		until.UnixMilli(), now.UnixMilli(), limit).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("claim edge purges: %w", err)
	}
	return rows, nil
}

// backlog returns how many rows are due at now and when the oldest of them was written
// (zero when none is due).
func backlog(ctx context.Context, gdb *gorm.DB, now time.Time) (int, time.Time, error) {
	var b struct {
		N      int
		Oldest int64
	}
	if err := gdb.WithContext(ctx).Raw("SELECT COUNT(*) AS n, COALESCE(MIN(created_ms), 0) AS oldest FROM edge_purges WHERE due_ms <= ?",
		now.UnixMilli()).Scan(&b).Error; err != nil {
		return 0, time.Time{}, fmt.Errorf("count edge purges: %w", err)
	}
	if b.N == 0 {
		return 0, time.Time{}, nil
	}
	return b.N, time.UnixMilli(b.Oldest), nil
}

// accountNote is a note of an account whose reads a purge without a note drops.
type accountNote struct {
	AccountCUID string `gorm:"column:account_cuid"`
	CUID        string `gorm:"column:cuid"`
}

// accountNotes returns the notes of accounts that are not unpublished: those whose
// reads may be cached.
func accountNotes(ctx context.Context, gdb *gorm.DB, accounts []string) ([]accountNote, error) {
	var out []accountNote
	for len(accounts) > 0 {
		n := min(len(accounts), chunk)
		var part []accountNote
		if err := gdb.WithContext(ctx).Table("publications").Select("account_cuid, cuid").
			Where("account_cuid IN ? AND NOT unpublished", accounts[:n]).Scan(&part).Error; err != nil {
			return nil, fmt.Errorf("read the notes of accounts to purge: %w", err)
		}
		out = append(out, part...)
		accounts = accounts[n:]
	}
	return out, nil
}

// chunk is how many ids one statement names.
const chunk = 500

// eachChunk calls fn with the ids of rows, chunk at a time.
func eachChunk(rows []row, fn func(ids []int64) error) error {
	for len(rows) > 0 {
		n := min(len(rows), chunk)
		ids := make([]int64, n)
		for i, r := range rows[:n] {
			ids[i] = r.ID
		}
		if err := fn(ids); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// sent records that rows were sent: a row sent for the first time is due again at
// again, one sent before is deleted; with final every row is deleted.
func sent(ctx context.Context, gdb *gorm.DB, rows []row, again time.Time, final bool) error {
	err := eachChunk(rows, func(ids []int64) error {
		tx := gdb.WithContext(ctx)
		if final {
			return tx.Where("id IN ?", ids).Delete(&row{}).Error
		}
		if err := tx.Where("id IN ? AND sends > 0", ids).Delete(&row{}).Error; err != nil {
			return err
		}
		return tx.Model(&row{}).Where("id IN ?", ids).Updates(map[string]any{"sends": 1, "due_ms": again.UnixMilli()}).Error
	})
	if err != nil {
		return fmt.Errorf("record edge purges sent: %w", err)
	}
	return nil
}

// retry makes rows due again at at.
func retry(ctx context.Context, gdb *gorm.DB, rows []row, at time.Time) error {
	err := eachChunk(rows, func(ids []int64) error {
		return gdb.WithContext(ctx).Model(&row{}).Where("id IN ?", ids).Update("due_ms", at.UnixMilli()).Error
	})
	if err != nil {
		return fmt.Errorf("retry edge purges: %w", err)
	}
	return nil
}
