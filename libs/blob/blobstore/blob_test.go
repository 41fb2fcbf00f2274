package blobstore_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/sharenote/sharenote/libs/blob"
	"github.com/sharenote/sharenote/libs/blob/blobstore"
	"github.com/sharenote/sharenote/libs/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// fixture is a store under test and a look behind it.
type fixture struct {
	blob.Store
	// keepsType is whether Stat and Get report the content type Put was given.
	keepsType bool
	// leftovers counts what a failed Put of key may have left that no listing shows:
	// files that are no object in the file store, incomplete multipart uploads in S3.
	leftovers func(t *testing.T, key string) int
}

// eachStore runs fn on an empty file store and on an empty bucket of a real MinIO.
func eachStore(t *testing.T, fn func(t *testing.T, f fixture)) {
	t.Run("files", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "blobs")
		s := open(t, "file://"+dir, nil)
		fn(t, fixture{Store: s, leftovers: func(t *testing.T, _ string) int {
			files := 0
			err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					files++
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return files - len(list(t, s, ""))
		}})
	})
	t.Run("s3", func(t *testing.T) {
		b := testkit.S3(t)
		client, err := minio.New(b.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(b.AccessKey, b.SecretKey, ""),
			Secure: strings.Contains(b.URL, "tls=true")})
		if err != nil {
			t.Fatal(err)
		}
		fn(t, fixture{Store: open(t, b.URL, b.Env), keepsType: true, leftovers: func(t *testing.T, key string) int {
			uploads := 0
			for u := range client.ListIncompleteUploads(context.Background(), b.Name, key, true) {
				if u.Err != nil {
					t.Fatal(u.Err)
				}
				uploads++
			}
			return uploads
		}})
	})
}

func open(t *testing.T, rawURL string, env map[string]string) blob.Store {
	t.Helper()
	s, err := blobstore.Open(context.Background(), rawURL, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// data yields n pseudo-random bytes, the same for the same seed, allocating nothing.
func data(seed byte, n int64) io.Reader {
	return io.LimitReader(rand.NewChaCha8([32]byte{seed}), n)
}

func sum(t *testing.T, r io.Reader) [32]byte {
	t.Helper()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		t.Fatal(err)
	}
	return [32]byte(h.Sum(nil))
}

func put(t *testing.T, s blob.Store, key, content string) {
	t.Helper()
	if _, err := s.Put(context.Background(), key, strings.NewReader(content), int64(len(content)), "text/plain"); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, s blob.Store, key string, off, n int64) ([]byte, blob.Info) {
	t.Helper()
	rc, info, err := s.Get(context.Background(), key, off, n)
	if err != nil {
		t.Fatalf("get %s [%d, %d]: %v", key, off, n, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b, info
}

func list(t *testing.T, s blob.Store, prefix string) []string {
	t.Helper()
	var keys []string
	if err := s.List(context.Background(), prefix, func(o blob.Info) error {
		keys = append(keys, o.Key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

// readFunc is a reader made of a function.
type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

var errSource = errors.New("the source broke")

func TestPutAndGetBackByteForByte(t *testing.T) {
	eachStore(t, func(t *testing.T, s fixture) {
		ctx := context.Background()
		for _, c := range []struct {
			name string
			size int64
			// known is whether Put is told the size.
			known bool
		}{
			{"empty", 0, true},
			{"small, size known", 3000, true},
			{"small, size unknown", 3000, false},
			{"larger than a part, size known", blob.PutBuffer + 1, true},
			{"many parts, size unknown", 12 << 20, false},
		} {
			t.Run(c.name, func(t *testing.T) {
				key := "u/n/" + strings.ReplaceAll(c.name, " ", "")[:5]
				size := c.size
				if !c.known {
					size = -1
				}
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				info, err := s.Put(ctx, key, data(1, c.size), size, "image/png")
				runtime.ReadMemStats(&after)
				if err != nil {
					t.Fatal(err)
				}
				// An object of known size streams; one of unknown size goes a part at a time.
				bound := uint64(2 * blob.PutBuffer)
				if c.known {
					bound = blob.PutBuffer / 2
				}
				if alloc := after.TotalAlloc - before.TotalAlloc; alloc > bound {
					t.Errorf("Put of %d bytes allocated %d bytes, more than %d", c.size, alloc, bound)
				}
				if info.Key != key || info.Size != c.size {
					t.Errorf("Put = %+v, want key %s and size %d", info, key, c.size)
				}
				rc, got, err := s.Get(ctx, key, 0, -1)
				if err != nil {
					t.Fatal(err)
				}
				defer rc.Close()
				if sum(t, rc) != sum(t, data(1, c.size)) {
					t.Error("the bytes read back differ from those put")
				}
				stat, err := s.Stat(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				for _, i := range []blob.Info{got, stat} {
					if i.Key != key || i.Size != c.size || time.Since(i.ModTime).Abs() > time.Minute {
						t.Errorf("info = %+v, want key %s, size %d, modified now", i, key, c.size)
					}
					if want := map[bool]string{true: "image/png"}[s.keepsType]; i.ContentType != want {
						t.Errorf("content type %q, want %q", i.ContentType, want)
					}
				}
			})
		}
	})
}

func TestRanges(t *testing.T) {
	eachStore(t, func(t *testing.T, s fixture) {
		content := strings.Repeat("0123456789", 100)
		put(t, s, "u/n/r", content)
		for _, c := range []struct {
			name   string
			off, n int64
			want   string
		}{
			{"whole", 0, -1, content},
			{"head", 0, 10, content[:10]},
			{"one byte", 0, 1, "0"},
			{"middle", 995, 3, "567"},
			{"tail from an offset", 990, -1, content[990:]},
			{"a range past the end is cut", 995, 100, content[995:]},
			{"at the end nothing", 1000, -1, ""},
			{"past the end nothing", 2000, 5, ""},
			{"no bytes", 5, 0, ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				got, info := get(t, s, "u/n/r", c.off, c.n)
				if string(got) != c.want {
					t.Errorf("got %d bytes %.20q…, want %d bytes %.20q…", len(got), got, len(c.want), c.want)
				}
				if info.Size != int64(len(content)) {
					t.Errorf("info.Size = %d, want the whole object's %d", info.Size, len(content))
				}
			})
		}
		if _, _, err := s.Get(context.Background(), "u/n/r", -1, 5); err == nil {
			t.Error("a negative offset is no error")
		}
	})
}

func TestMissingObjectIsErrNotFound(t *testing.T) {
	eachStore(t, func(t *testing.T, s fixture) {
		ctx := context.Background()
		put(t, s, "u/n/x", "x")
		// u/n is a directory of the file store, a mere prefix in S3: no object either way.
		for _, key := range []string{"u/n/missing", "u/n", "u/n/x/y"} {
			if _, _, err := s.Get(ctx, key, 0, -1); !errors.Is(err, blob.ErrNotFound) || errors.Is(err, blob.ErrUnavailable) {
				t.Errorf("Get(%s) = %v, want ErrNotFound", key, err)
			}
			if _, err := s.Stat(ctx, key); !errors.Is(err, blob.ErrNotFound) {
				t.Errorf("Stat(%s) = %v, want ErrNotFound", key, err)
			}
		}
		if _, _, err := s.Get(ctx, "u/n/missing", 5, 0); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("empty Get of a missing object = %v, want ErrNotFound", err)
		}
	})
}

func TestDeleteIsIdempotentAndBatched(t *testing.T) {
	eachStore(t, func(t *testing.T, s fixture) {
		ctx := context.Background()
		// More keys than one DeleteObjects request takes (1000), a few of them stored.
		keys := make([]string, 1500)
		for i := range keys {
			keys[i] = fmt.Sprintf("u/n/k%04d", i)
		}
		for _, i := range []int{0, 999, 1000, 1499} {
			put(t, s, keys[i], "x")
		}
		put(t, s, "u/kept/k", "x")
		for range 2 {
			if err := s.Delete(ctx, keys...); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Delete(ctx); err != nil {
			t.Errorf("Delete of no key = %v", err)
		}
		if got := list(t, s, ""); !slices.Equal(got, []string{"u/kept/k"}) {
			t.Errorf("after the deletes the store holds %v, want only u/kept/k", got)
		}
		if err := s.Delete(ctx, "u/kept/k", "../escape"); err == nil {
			t.Error("Delete with an invalid key is no error")
		}
		if got := list(t, s, ""); len(got) != 1 {
			t.Errorf("a Delete refused for an invalid key removed %v", got)
		}
	})
}

func TestListByPrefixInKeyOrder(t *testing.T) {
	eachStore(t, func(t *testing.T, s fixture) {
		// "-" sorts before "/": u1/n1-b/c comes before u1/n1/a, as S3 lists.
		keys := []string{"u1/n1/b", "u1/n1/a", "u1/n2/a", "u1/n10/z", "u1/n1-b/c", "u1-x/n/a", "u2/n/a", "u1/n1/A"}
		for _, k := range keys {
			put(t, s, k, k)
		}
		for _, c := range []struct{ prefix string }{{""}, {"u1/"}, {"u1"}, {"u1/n1"}, {"u1/n1/"}, {"u1/n1/a"}, {"u3/"}, {"u1/n1/a/"}} {
			var want []string
			for _, k := range slices.Sorted(slices.Values(keys)) {
				if strings.HasPrefix(k, c.prefix) {
					want = append(want, k)
				}
			}
			if got := list(t, s, c.prefix); !slices.Equal(got, want) {
				t.Errorf("List(%q) = %v, want %v", c.prefix, got, want)
			}
		}
		errStop := errors.New("stop")
		calls := 0
		err := s.List(context.Background(), "", func(o blob.Info) error {
			calls++
			if o.Size != int64(len(o.Key)) || time.Since(o.ModTime).Abs() > time.Minute {
				t.Errorf("listed %+v, want its size and a modification time of now", o)
			}
			return errStop
		})
		if !errors.Is(err, errStop) || calls != 1 {
			t.Errorf("List whose fn fails = %v after %d calls, want fn's error after 1", err, calls)
		}
		for _, prefix := range []string{"../", "u1/../", "/", "u1//", "u1/.tmp"} {
			if err := s.List(context.Background(), prefix, func(blob.Info) error { return nil }); err == nil {
				t.Errorf("List(%q) is no error", prefix)
			}
		}
	})
}

// TestFailedPutLeavesNothing: whatever ends a Put early (the source failing, the context
// ending, a size the source does not keep), no object appears and nothing is left over.
func TestFailedPutLeavesNothing(t *testing.T) {
	eachStore(t, func(t *testing.T, s fixture) {
		for _, c := range []struct {
			name string
			// at is where the source fails or the context ends.
			at   int64
			size int64
			// cancel ends the context at at instead of failing the source.
			cancel bool
			want   error
		}{
			{"the source fails", 1000, -1, false, errSource},
			{"the source fails after parts were stored", 2*blob.PutBuffer + 1000, -1, false, errSource},
			{"the source fails, size known", 1000, 5000, false, errSource},
			{"the source fails, size known, larger than a part", blob.PutBuffer + 1000, blob.PutBuffer + 5000, false, errSource},
			{"the context ends", 1000, -1, true, context.Canceled},
			{"the context ends after parts were stored", 2*blob.PutBuffer + 1000, -1, true, context.Canceled},
			{"the context ended before", 0, -1, true, context.Canceled},
			{"the context ends as the source does", 1000, -1, true, context.Canceled},
		} {
			t.Run(c.name, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				rest := readFunc(func([]byte) (int, error) { return 0, errSource })
				more, after := data(3, 1<<30), int64(0)
				switch {
				case c.name == "the context ends as the source does":
					rest = func([]byte) (int, error) { cancel(); return 0, io.EOF }
				case c.cancel:
					if c.at == 0 {
						cancel()
					}
					rest = func(p []byte) (int, error) {
						cancel()
						n, err := more.Read(p)
						after += int64(n)
						return n, err
					}
				}
				key := "u/n/failed"
				_, err := s.Put(ctx, key, io.MultiReader(data(2, c.at), rest), c.size, "image/png")
				// At most the part being filled is read once the context ended.
				if after > blob.PutBuffer {
					t.Errorf("Put read %d bytes after the context ended", after)
				}
				if !errors.Is(err, c.want) || errors.Is(err, blob.ErrUnavailable) {
					t.Errorf("Put = %v, want %v, not the store's failure", err, c.want)
				}
				if _, err := s.Stat(context.Background(), key); !errors.Is(err, blob.ErrNotFound) {
					t.Errorf("after the failed Put, Stat = %v, want ErrNotFound", err)
				}
				if n := s.leftovers(t, key); n != 0 {
					t.Errorf("the failed Put left %d things behind", n)
				}
			})
		}
		t.Run("the source is shorter than the size", func(t *testing.T) {
			if _, err := s.Put(context.Background(), "u/n/short", strings.NewReader("half"), 8, "image/png"); err == nil {
				t.Error("Put is no error")
			}
			if _, err := s.Stat(context.Background(), "u/n/short"); !errors.Is(err, blob.ErrNotFound) {
				t.Errorf("after the failed Put, Stat = %v, want ErrNotFound", err)
			}
		})
	})
}

func TestInvalidKeysAreRefused(t *testing.T) {
	eachStore(t, func(t *testing.T, s fixture) {
		ctx := context.Background()
		for _, key := range []string{"", "/a", "a/", "a//b", "..", "../x", "a/../b", "a/./b", ".tmp/x", "a b", `a\b`, "a.png",
			"ü", "a/\x00", strings.Repeat("a", 1025)} {
			if _, err := s.Put(ctx, key, strings.NewReader("x"), 1, "text/plain"); err == nil {
				t.Errorf("Put(%q) is no error", key)
			}
			if _, _, err := s.Get(ctx, key, 0, -1); err == nil || errors.Is(err, blob.ErrNotFound) {
				t.Errorf("Get(%q) = %v, want an invalid key", key, err)
			}
			if _, err := s.Stat(ctx, key); err == nil || errors.Is(err, blob.ErrNotFound) {
				t.Errorf("Stat(%q) = %v, want an invalid key", key, err)
			}
		}
		if got := list(t, s, ""); len(got) != 0 {
			t.Errorf("the refused Puts stored %v", got)
		}
	})
}

// TestS3OutageIsErrUnavailable: with the store down every method fails at once with
// ErrUnavailable, naming the cause; once it is back the objects are there.
func TestS3OutageIsErrUnavailable(t *testing.T) {
	ctx := context.Background()
	server := testkit.StartMinIO(t)
	b := server.Bucket(t)
	s := open(t, b.URL, b.Env)
	put(t, s, "u/n/kept", "kept")
	server.Stop()
	closed := open(t, "s3://nobody?tls=false&endpoint="+testkit.FreeAddr(), b.Env)
	for name, st := range map[string]blob.Store{"stopped": s, "closed port": closed} {
		ops := map[string]func() error{
			"put": func() error {
				_, err := st.Put(ctx, "u/n/new", strings.NewReader("new"), 3, "text/plain")
				return err
			},
			"put of unknown size": func() error {
				_, err := st.Put(ctx, "u/n/new", strings.NewReader("new"), -1, "text/plain")
				return err
			},
			"get": func() error {
				_, _, err := st.Get(ctx, "u/n/kept", 0, -1)
				return err
			},
			"stat":   func() error { _, err := st.Stat(ctx, "u/n/kept"); return err },
			"delete": func() error { return st.Delete(ctx, "u/n/kept") },
			"list":   func() error { return st.List(ctx, "", func(blob.Info) error { return nil }) },
			"ping":   func() error { return st.Ping(ctx) },
		}
		for op, call := range ops {
			began := time.Now()
			err := call()
			// A new connection is refused; one the client kept from before the stop breaks
			// under the first write or read (broken pipe, reset).
			if !errors.Is(err, blob.ErrUnavailable) || !slices.ContainsFunc([]string{"connection refused", "broken pipe", "connection reset"},
				func(cause string) bool { return strings.Contains(err.Error(), cause) }) {
				t.Errorf("%s: %s = %v, want ErrUnavailable naming the refused or broken connection", name, op, err)
			}
			if took := time.Since(began); took > 5*time.Second {
				t.Errorf("%s: %s took %s to fail", name, op, took)
			}
		}
	}
	server.Start()
	if got, _ := get(t, s, "u/n/kept", 0, -1); string(got) != "kept" {
		t.Errorf("after the outage the object holds %q", got)
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping after the outage = %v", err)
	}
}

func TestS3PingNamesAMissingBucket(t *testing.T) {
	b := testkit.S3(t)
	s := open(t, strings.Replace(b.URL, b.Name, "sntest-missing", 1), b.Env)
	err := s.Ping(context.Background())
	if err == nil || errors.Is(err, blob.ErrUnavailable) || !strings.Contains(err.Error(), `"sntest-missing" does not exist`) {
		t.Errorf("Ping = %v, want an error naming the missing bucket", err)
	}
	// Reads and writes meanwhile are an outage to retry (503), as before the chart's
	// bucket Job has run.
	if _, err := s.Put(context.Background(), "u/n/x", strings.NewReader("x"), 1, "image/png"); !errors.Is(err, blob.ErrUnavailable) {
		t.Errorf("Put into a missing bucket = %v, want ErrUnavailable", err)
	}
	if _, _, err := s.Get(context.Background(), "u/n/x", 0, -1); !errors.Is(err, blob.ErrUnavailable) {
		t.Errorf("Get from a missing bucket = %v, want ErrUnavailable", err)
	}
}

func TestFilesArePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "blobs")
	s := open(t, "file://"+dir, nil)
	put(t, s, "u/n/x", "x")
	for p, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "u"): 0o700, filepath.Join(dir, "u", "n"): 0o700,
		filepath.Join(dir, "u", "n", "x"): 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want mode %v", p, fi.Mode(), err, want)
		}
	}
}

func TestFilesDeletePrunesEmptyDirectories(t *testing.T) {
	dir := t.TempDir()
	s := open(t, "file://"+dir, nil)
	put(t, s, "u/n1/x", "x")
	put(t, s, "u/n2/x", "x")
	if err := s.Delete(context.Background(), "u/n1/x"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "u", "n1")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("u/n1 stays after its last object went: %v", err)
	}
	if err := s.Delete(context.Background(), "u/n2/x"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "u")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("u stays after its last object went: %v", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("the store's directory went too: %v", err)
	}
	put(t, s, "u/n1/x", "again")
	if got, _ := get(t, s, "u/n1/x", 0, -1); string(got) != "again" {
		t.Errorf("a Put after the pruning stored %q", got)
	}
}

// TestFilesOpenRemovesStaleTemporaryFiles: what an interrupted Put left goes once it is
// older than any upload; a Put in progress stays.
func TestFilesOpenRemovesStaleTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	open(t, "file://"+dir, nil)
	stale, fresh := filepath.Join(dir, ".tmp", "put-stale"), filepath.Join(dir, ".tmp", "put-fresh")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("part"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-25 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	open(t, "file://"+dir, nil)
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the stale file stays: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("the fresh file went: %v", err)
	}
}

// FuzzFileKeys: whatever the key, the file store writes inside its directory, and
// stores exactly what it lists under that key.
func FuzzFileKeys(f *testing.F) {
	for _, k := range []string{"a/b/c", "../a", "a/../../b", "a//b", "/etc/passwd", ".tmp/x", "a-b_C9", "a\\..\\b", "a/b/"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		parent := t.TempDir()
		s := open(t, "file://"+filepath.Join(parent, "blobs"), nil)
		_, err := s.Put(context.Background(), key, strings.NewReader("x"), 1, "text/plain")
		if entries, _ := os.ReadDir(parent); len(entries) != 1 {
			t.Fatalf("Put(%q) wrote beside the store's directory", key)
		}
		got := list(t, s, "")
		if err == nil && !slices.Equal(got, []string{key}) || err != nil && len(got) != 0 {
			t.Fatalf("Put(%q) = %v, and the store lists %q", key, err, got)
		}
	})
}
