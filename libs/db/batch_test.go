package db_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

type batchRow struct {
	ID   int `gorm:"primaryKey;autoIncrement:false"`
	Note *string
}

func (batchRow) TableName() string { return "batch_rows" }

// TestABatchIsAllOrNothing: a batch whose last write fails leaves nothing of the others,
// with the error gorm's own statements give; a batch that succeeds leaves all of it; a
// batch given a transaction is part of it. On Postgres it is sent as one batch (one span
// with every statement), not as a transaction.
func TestABatchIsAllOrNothing(t *testing.T) {
	for _, backend := range []struct{ name, url string }{
		{"postgres", testkit.NewPostgresDB(t)},
		{"sqlite", "sqlite:" + filepath.Join(t.TempDir(), "sharenote.db")},
	} {
		t.Run(backend.name, func(t *testing.T) {
			ctx := context.Background()
			spans := tracetest.NewSpanRecorder()
			gdb, err := db.Open(ctx, backend.url, sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close(gdb)
			if err := gdb.Exec("CREATE TABLE batch_rows (id INTEGER PRIMARY KEY, note TEXT)").Error; err != nil {
				t.Fatal(err)
			}
			insert := func(id int, note *string) db.Write {
				return func(tx *gorm.DB) *gorm.DB { return tx.Create(&batchRow{ID: id, Note: note}) }
			}
			ids := func() []int {
				var out []int
				if err := gdb.Model(&batchRow{}).Order("id").Pluck("id", &out).Error; err != nil {
					t.Fatal(err)
				}
				return out
			}

			err = db.Batch(ctx, gdb, insert(1, new("a")), insert(2, nil), insert(1, new("again")))
			if !errors.Is(err, gorm.ErrDuplicatedKey) {
				t.Errorf("a batch with a duplicate key: %v, want gorm.ErrDuplicatedKey", err)
			}
			if got := ids(); len(got) != 0 {
				t.Errorf("after a failed batch the table holds %v, want nothing", got)
			}
			if err := db.Batch(ctx, gdb, insert(3, new("c")), insert(4, nil)); err != nil {
				t.Fatal(err)
			}
			if got := ids(); !slices.Equal(got, []int{3, 4}) {
				t.Errorf("after a batch the table holds %v, want [3 4]", got)
			}
			undo := errors.New("undo")
			err = gdb.Transaction(func(tx *gorm.DB) error {
				if err := db.Batch(ctx, tx, insert(5, nil)); err != nil {
					return err
				}
				return undo
			})
			if !errors.Is(err, undo) || slices.Contains(ids(), 5) {
				t.Errorf("a batch in a transaction that was rolled back (%v) left row 5: %v", err, ids())
			}
			var note string
			if err := gdb.Raw("SELECT note FROM batch_rows WHERE id = 3").Scan(&note).Error; err != nil || note != "c" {
				t.Errorf("row 3's note = %q (%v), want c", note, err)
			}

			var batches int
			for _, s := range spans.Ended() {
				if s.Name() == "gorm.Batch" {
					batches++
				}
			}
			if want := map[string]int{"postgres": 2, "sqlite": 0}[backend.name]; batches != want {
				t.Errorf("%d batch spans, want %d", batches, want)
			}
		})
	}
}
