package publish_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharenote/sharenote/libs/testkit"
)

// bigImage streams a PNG of size bytes: a valid PNG followed by bytes drawn from a
// generator seeded with seed, so that the same image can be made again to check what was
// stored without keeping it in memory.
func bigImage(t testing.TB, seed uint64, size int) io.Reader {
	head := testkit.PNG(t)
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	return io.MultiReader(bytes.NewReader(head), io.LimitReader(rand.NewChaCha8(key), int64(size-len(head))))
}

func imageDigest(t testing.TB, seed uint64, size int) [32]byte {
	h := sha256.New()
	if _, err := io.Copy(h, bigImage(t, seed, size)); err != nil {
		t.Fatal(err)
	}
	return [32]byte(h.Sum(nil))
}

// streamedUpload is a multipart publish whose body is generated while it is sent.
func streamedUpload(t testing.TB, url, token string, seed uint64, images, size int) (*http.Request, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := func() error {
			refs := make([]string, images)
			for j := range refs {
				refs[j] = fmt.Sprintf("![[%d.png]]", j)
			}
			if err := mw.WriteField("content", strings.Join(refs, "\n")); err != nil {
				return err
			}
			for j := range images {
				h := textproto.MIMEHeader{}
				h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%d.png"; filename="%d.png"`, j, j))
				h.Set("Content-Type", "image/png")
				w, err := mw.CreatePart(h)
				if err != nil {
					return err
				}
				if _, err := io.Copy(w, bigImage(t, seed+uint64(j), size)); err != nil {
					return err
				}
			}
			return mw.Close()
		}()
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequest("POST", url+"/api/publish", pr)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	return req, nil
}

// peakRSS reads the process's peak resident set (VmHWM) since the last resetPeakRSS.
func peakRSS(t testing.TB) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Skip("/proc/self/status has no VmHWM")
	return 0
}

// resetPeakRSS returns the heap earlier tests left to the system and restarts VmHWM from
// the current resident set.
func resetPeakRSS(t testing.TB) {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak RSS: %v", err)
	}
}

func heapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestManyLargeUploadsKeepMemoryBounded sends 50 multipart publishes of 24 MB at once
// (5 images of 4.8 MB each, generated while sent, so that the clients hold almost
// nothing) to a server with the default SHARE_MAX_UPLOADS and SHARE_UPLOAD_WAIT, and
// measures the peak resident set of this test process, which holds the server, its
// database driver and the clients (Postgres is another process). Each client sends once:
// the uploads beyond the cap wait for a slot, so every one must be stored within 2
// minutes, or be refused with 503 and Retry-After only after waiting SHARE_UPLOAD_WAIT.
// Every stored image must read back byte for byte.
func TestManyLargeUploadsKeepMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("50 uploads of 24 MB: skipped with -short")
	}
	const (
		clients   = 50
		images    = 5
		imageSize = 4_800_000
		limit     = 512 << 20
	)
	testkit.EachBackend(t, func(t *testing.T, b testkit.Backend) {
		f := start(t, b)
		// One account per client: the mutation limit is 60 a minute per account.
		accounts := make([]testkit.Account, clients)
		for i := range accounts {
			accounts[i] = f.NewAccount(t, fmt.Sprintf("uploader%d", i))
		}
		client := &http.Client{Timeout: 2 * time.Minute}

		resetPeakRSS(t)
		base := peakRSS(t)
		var peakHeap uint64
		stop := make(chan struct{})
		var sampler sync.WaitGroup
		sampler.Go(func() {
			for {
				peakHeap = max(peakHeap, heapInUse())
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		})

		type result struct {
			cuid   string
			status int
			took   time.Duration // from sending to the answer
		}
		wait := f.App.Deps().Config.UploadWait
		results := make([]result, clients)
		began := time.Now()
		var wg sync.WaitGroup
		for i := range clients {
			wg.Go(func() {
				r := &results[i]
				req, err := streamedUpload(t, f.URL, accounts[i].Token, uint64(i)*1000, images, imageSize)
				if err != nil {
					t.Error(err)
					return
				}
				sent := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					t.Errorf("client %d: %v", i, err)
					return
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				r.took = time.Since(sent)
				if err != nil {
					t.Errorf("client %d: %v", i, err)
					return
				}
				testkit.ValidateResponse(t, req, resp.StatusCode, resp.Header, body)
				r.status = resp.StatusCode
				switch resp.StatusCode {
				case http.StatusOK:
					r.cuid = f.published(t, &testkit.Response{Status: resp.StatusCode, Header: resp.Header, Body: body})
				case http.StatusServiceUnavailable:
					if r.took < wait {
						t.Errorf("client %d: 503 after %v, before the upload wait of %v", i, r.took.Round(time.Millisecond), wait)
					}
					if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s < 1 {
						t.Errorf("client %d: 503 with Retry-After %q", i, resp.Header.Get("Retry-After"))
					}
				default:
					t.Errorf("client %d: %d %s", i, resp.StatusCode, body)
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(began)
		close(stop)
		sampler.Wait()
		peak := peakRSS(t)

		statuses := map[int]int{}
		var stored, refused []time.Duration
		for _, r := range results {
			statuses[r.status]++
			switch r.status {
			case http.StatusOK:
				stored = append(stored, r.took)
			case http.StatusServiceUnavailable:
				refused = append(refused, r.took)
			}
		}
		quantile := func(ds []time.Duration, q float64) time.Duration {
			if len(ds) == 0 {
				return 0
			}
			slices.Sort(ds)
			return ds[int(q*float64(len(ds)-1))].Round(time.Millisecond)
		}
		t.Logf("%d publishes of %d MB at once in %v (SHARE_UPLOAD_WAIT %v): responses by status %v; stored after p50 %v, max %v; "+
			"refused after p50 %v; peak RSS (VmHWM) %d MiB (%d MiB before), peak Go heap %d MiB",
			clients, images*imageSize/1_000_000, elapsed.Round(time.Millisecond), wait, statuses, quantile(stored, 0.5), quantile(stored, 1),
			quantile(refused, 0.5), peak>>20, base>>20, peakHeap>>20)
		if slowest := quantile(stored, 1); slowest > 2*time.Minute {
			t.Errorf("the slowest publish was stored after %v, want within 2 minutes", slowest)
		}
		if peak > limit {
			t.Errorf("peak RSS %d MiB, want under %d MiB", peak>>20, limit>>20)
		}

		// Every stored image reads back byte for byte, one at a time.
		ctx := context.Background()
		for i, r := range results {
			if r.cuid == "" {
				continue
			}
			for j := range images {
				iv, err := testkit.Must(f.App.Deps().Images()).ReadImage(ctx, accounts[i].UserCUID, r.cuid, fmt.Sprintf("%d.png", j))
				if err != nil {
					t.Fatalf("read image %d of client %d: %v", j, i, err)
				}
				rc, err := testkit.Must(f.App.Deps().Images()).OpenImage(ctx, iv.Image, 0, -1)
				if err != nil {
					t.Fatalf("open image %d of client %d: %v", j, i, err)
				}
				h := sha256.New()
				n, err := io.Copy(h, rc)
				rc.Close()
				seed := uint64(i)*1000 + uint64(j)
				if err != nil || n != imageSize || [32]byte(h.Sum(nil)) != imageDigest(t, seed, imageSize) {
					t.Fatalf("image %d of client %d reads back %d bytes (%v) that differ from the %d sent", j, i, n, err, imageSize)
				}
			}
		}
	})
}
