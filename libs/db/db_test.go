//go:build unix

package db_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"go.opentelemetry.io/otel/trace/noop"

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
