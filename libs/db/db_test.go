//go:build unix

package db_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace/noop"
	"gorm.io/gorm"

	"github.com/sharenote/sharenote/libs/db"
)

// TestSQLiteFilesAreOwnerOnly opens the embedded default in a data directory that does
// not exist yet, as a first start does, writes to it, and checks that neither the
// directory nor the database file nor its -wal and -shm files can be read by other users,
// whatever the umask lets through.
func TestSQLiteFilesAreOwnerOnly(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	dataDir := filepath.Join(t.TempDir(), "data", "nested")
	path := filepath.Join(dataDir, "sharenote.db")
	ctx := context.Background()
	gdb, err := db.Open(ctx, "sqlite:"+path, noop.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(gdb)
	if err := db.Migrate(ctx, gdb); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{dataDir, filepath.Dir(dataDir)} {
		if mode := stat(t, dir); mode != os.ModeDir|0o700 {
			t.Errorf("%s has mode %v, want drwx------", dir, mode)
		}
	}
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		if mode := stat(t, name); mode != 0o600 {
			t.Errorf("%s has mode %v, want -rw-------", filepath.Base(name), mode)
		}
	}
}

func stat(t *testing.T, name string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

// TestASQLiteTransactionThatReadsThenWritesBesideAnotherProcess: a transaction that
// reads and then writes while another connection to the file (another process: the CLI,
// or a serving process's background writes) commits a write in between still commits,
// and so does the other write, after it. With SQLite's default deferred transactions the
// first failed at its write with "database is locked (517)" (SQLITE_BUSY_SNAPSHOT),
// which no busy timeout waits out.
func TestASQLiteTransactionThatReadsThenWritesBesideAnotherProcess(t *testing.T) {
	url := "sqlite:" + filepath.Join(t.TempDir(), "sharenote.db")
	open := func() *gorm.DB {
		gdb, err := db.Open(context.Background(), url, noop.NewTracerProvider())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close(gdb) })
		return gdb
	}
	first, second := open(), open()
	if err := db.Migrate(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	other := make(chan error, 1)
	err := first.Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Table("accounts").Count(&n).Error; err != nil {
			return err
		}
		go func() {
			other <- second.Exec("INSERT INTO service_keys (name, secret) VALUES ('other', x'00')").Error
		}()
		time.Sleep(300 * time.Millisecond) // the other write commits here unless it must wait
		return tx.Exec("INSERT INTO service_keys (name, secret) VALUES ('first', x'00')").Error
	})
	if err != nil {
		t.Fatalf("the transaction that read first: %v", err)
	}
	if err := <-other; err != nil {
		t.Fatalf("the other process's write: %v", err)
	}
}
