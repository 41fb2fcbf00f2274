package publish_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/testkit"
)

// publishAndReadBack publishes three images of different sizes, one of them split across
// many reads, and checks that each reads back byte for byte with its size and SHA-256;
// an image over 5 MiB is refused.
func publishAndReadBack(t *testing.T, f *fixture) {
	t.Helper()
	acc := f.NewAccount(t, "spooled")
	images := map[string][]byte{
		"small.png":  testkit.PNG(t),
		"medium.png": testkit.PNGOfSize(t, 100_000),
		"large.png":  testkit.PNGOfSize(t, imageLimit),
	}
	// Padding that is not all zeros, so that a misplaced chunk would show.
	padding := images["large.png"][len(images["small.png"]):]
	for i := range padding {
		padding[i] = byte(i * 7)
	}
	parts := []part{field("content", "![[small.png]] ![[medium.png]] ![[large.png]]")}
	for name, data := range images {
		parts = append(parts, file(name, "image/png", data))
	}
	id := f.published(t, f.multipart(t, acc.Token, parts...))
	for name, data := range images {
		iv, err := f.App.Deps().Notes.ReadImage(context.Background(), acc.UserCUID, id, name)
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		sum := sha256.Sum256(data)
		if !bytes.Equal(iv.Image.Data, data) || iv.Image.Size != int64(len(data)) || iv.Image.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s reads back %d bytes (size %d, sha256 %s), want the %d sent", name, len(iv.Image.Data), iv.Image.Size, iv.Image.SHA256, len(data))
		}
	}
	if got, want := f.usage(t, acc), int64(len(images["small.png"])+len(images["medium.png"])+len(images["large.png"])); got != want {
		t.Errorf("image_bytes_used = %d, want %d", got, want)
	}
	f.multipart(t, acc.Token, field("content", "x"), file("big.png", "image/png", testkit.PNGOfSize(t, imageLimit+1))).
		Expect(t, http.StatusRequestEntityTooLarge, "image_too_large")
}

func TestImagePartsAreSpooledToTheTemporaryDirectoryAndRemoved(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		dir := t.TempDir()
		t.Setenv("TMPDIR", dir)
		f := start(t, b)
		publishAndReadBack(t, f)
		left, err := filepath.Glob(filepath.Join(dir, "sharenote-*"))
		if err != nil || len(left) != 0 {
			t.Errorf("spool files left behind: %v %v", left, err)
		}
		if strings.Contains(f.Logs.String(), "kept in memory") {
			t.Error("a writable temporary directory was reported unwritable")
		}
	})
}

func TestImagePartsStayInMemoryWhenTheTemporaryDirectoryCannotBeWritten(t *testing.T) {
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		// A directory that does not exist fails as a read-only file system does, also for
		// root (a container's read-only root without a /tmp volume).
		t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
		f := start(t, b)
		if !strings.Contains(f.Logs.String(), "image uploads are kept in memory") {
			t.Errorf("no warning that uploads are kept in memory; logs:\n%s", f.Logs.String())
		}
		publishAndReadBack(t, f)
	})
}
