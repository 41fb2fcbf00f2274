package testkit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace/noop"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/sharenote/sharenote/libs/blob"
	"github.com/sharenote/sharenote/libs/blob/blobstore"
	"github.com/sharenote/sharenote/libs/db"
	"github.com/sharenote/sharenote/libs/outbox"
)

// Main runs the package's tests and then stops any throw-away server testkit started.
// Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	cleanupMu.Lock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	cleanupMu.Unlock()
	os.Exit(code)
}

// Backend is one storage configuration a suite runs on.
type Backend struct {
	// Name is "postgres" (Postgres + Redis) or "sqlite" (the embedded default).
	Name        string
	DatabaseURL string
	// RedisURL is empty on the embedded default (in-process limits).
	RedisURL    string
	RedisPrefix string
	// BlobEnv configures the object store of a server on the backend: SHARE_BLOB_URL
	// (and credentials) of a bucket of its own in a throw-away MinIO with Postgres, of a
	// directory of its own (the embedded default's file store) with SQLite.
	BlobEnv map[string]string
}

// EachBackend runs fn as a subtest on Postgres with Redis and again on the embedded
// default, each with fresh, empty storage.
func EachBackend(t *testing.T, fn func(t *testing.T, b Backend)) {
	t.Helper()
	t.Run("postgres", func(t *testing.T) { fn(t, PostgresBackend(t)) })
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLiteBackend(t)) })
}

// EachDB runs fn on a fresh migrated Postgres database and on a fresh SQLite file, for
// a test of what is stored that needs neither Redis nor the object store.
func EachDB(t *testing.T, fn func(t *testing.T, gdb *gorm.DB)) {
	t.Helper()
	t.Run("postgres", func(t *testing.T) { fn(t, OpenDB(t, Backend{DatabaseURL: NewPostgresDB(t)})) })
	t.Run("sqlite", func(t *testing.T) { fn(t, OpenDB(t, SQLiteBackend(t))) })
}

// PostgresBackend returns a fresh migrated Postgres database and a Redis key prefix of
// its own; both are removed when the test ends.
func PostgresBackend(t *testing.T) Backend {
	t.Helper()
	return Backend{Name: "postgres", DatabaseURL: NewPostgresDB(t), RedisURL: RedisURL(t), RedisPrefix: NewRedisPrefix(t),
		BlobEnv: S3(t).Env}
}

// SQLiteBackend returns a fresh migrated SQLite file and no Redis.
func SQLiteBackend(t *testing.T) Backend {
	t.Helper()
	u := "sqlite:" + filepath.Join(t.TempDir(), "sharenote.db")
	migrate(t, u)
	return Backend{Name: "sqlite", DatabaseURL: u, BlobEnv: map[string]string{"SHARE_BLOB_URL": "file://" + filepath.Join(t.TempDir(), "blobs")}}
}

// NewPostgresDB creates an empty, migrated database and drops it when the test ends.
func NewPostgresDB(t *testing.T) string {
	t.Helper()
	u := NewEmptyPostgresDB(t)
	migrate(t, u)
	return u
}

// NewEmptyPostgresDB creates a database without any schema and drops it when the test
// ends.
func NewEmptyPostgresDB(t *testing.T) string {
	t.Helper()
	server, err := postgresServer()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := gorm.Open(postgres.Open(server), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatalf("connect to test postgres: %v", err)
	}
	name := randomName("sntest_")
	if err := admin.Exec("CREATE DATABASE " + name).Error; err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		defer db.Close(admin)
		if err := admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)").Error; err != nil {
			t.Errorf("drop test database: %v", err)
		}
	})
	return withDatabase(server, name)
}

func migrate(t *testing.T, u string) {
	t.Helper()
	ctx := context.Background()
	gdb, err := db.Open(ctx, u, noop.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(gdb)
	if err := db.Migrate(ctx, gdb); err != nil {
		t.Fatal(err)
	}
}

// OpenDB opens the backend's database for direct inspection by a test.
func OpenDB(t testing.TB, b Backend) *gorm.DB {
	t.Helper()
	gdb, err := db.Open(context.Background(), b.DatabaseURL, noop.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(gdb) })
	return gdb
}

// OpenBlobs opens the backend's object store for a test that uses the stores directly.
func OpenBlobs(t testing.TB, b Backend) blob.Store {
	t.Helper()
	s, err := blobstore.Open(context.Background(), b.BlobEnv["SHARE_BLOB_URL"], func(k string) string { return b.BlobEnv[k] })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// StoredRows counts what the backend's database keeps of a publication: its row (0 or 1)
// and its version snapshots.
func StoredRows(t *testing.T, b Backend, cuid string) (publications, versions int64) {
	t.Helper()
	gdb := OpenDB(t, b)
	if err := gdb.Table("publications").Where("cuid = ?", cuid).Count(&publications).Error; err != nil {
		t.Fatal(err)
	}
	if err := gdb.Table("versions").Where("publication_cuid = ?", cuid).Count(&versions).Error; err != nil {
		t.Fatal(err)
	}
	return publications, versions
}

// RedisURL returns the URL of the test Redis server.
func RedisURL(t *testing.T) string {
	t.Helper()
	u, err := redisServer()
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// NewRedisPrefix returns a key prefix of the test's own and deletes every key containing
// it when the test ends.
func NewRedisPrefix(t *testing.T) string {
	t.Helper()
	prefix := randomName("sntest:") + ":"
	u := RedisURL(t)
	t.Cleanup(func() {
		opts, err := redis.ParseURL(u)
		if err != nil {
			t.Error(err)
			return
		}
		rdb := redis.NewClient(opts)
		defer rdb.Close()
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, "*"+prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("clean test redis keys: %v", err)
		}
	})
	return prefix
}

// Clock is a settable clock for tests that must move time (token and note expiry).
type Clock struct {
	mu  sync.Mutex
	now time.Time
	// wall makes Now the wall clock plus offset, what Advance added (WallClock).
	wall   bool
	offset time.Duration
}

// WallClock returns a clock that runs with the wall clock: for tests whose processes
// expire notes as the time passes, as another process (an edge) sees it pass.
func WallClock() *Clock { return &Clock{wall: true} }

// NewClock returns a clock at the current time.
func NewClock() *Clock { return ClockAt(time.Now().UTC()) }

// ClockAt returns a clock at t.
func ClockAt(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wall {
		return time.Now().Add(c.offset)
	}
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
	c.now = c.now.Add(d)
}

// SyncBuffer is a goroutine-safe log sink.
type SyncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Await returns what was written once ok holds of it, waiting up to five seconds for
// lines still on their way: a process writes its log lines from a goroutine, at most
// once per logging.FlushInterval. It fails the test, saying what it waited for and
// showing what was written, if ok never holds.
func (b *SyncBuffer) Await(t testing.TB, what string, ok func(written string) bool) string {
	t.Helper()
	var s string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the logs:\n%s", b.String())
		}
	})
	Eventually(t, 5*time.Second, what+" in the logs", func() bool {
		s = b.String()
		return ok(s)
	})
	return s
}

// Eventually polls cond every 5 ms until it holds, and fails the test, naming what, if it
// does not within limit.
func Eventually(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Changes is the outbox writer for a test that uses the stores directly: its rows are due
// for the change feed's relay only, and of no process's feed.
func Changes() *outbox.Writer { return outbox.NewWriter(time.Now, "", false) }
