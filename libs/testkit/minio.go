package testkit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/sharenote/sharenote/libs/cuid"
)

// S3Bucket is a bucket of one test in an S3 server, and what a client needs to use it.
type S3Bucket struct {
	// Name is the bucket's name.
	Name string
	// URL is the bucket's SHARE_BLOB_URL: s3://<name>?endpoint=<host:port>&tls=false.
	URL string
	// Endpoint is the server's host:port; AccessKey and SecretKey its credentials.
	Endpoint, AccessKey, SecretKey string
	// Env configures a server to keep its objects in the bucket: SHARE_BLOB_URL,
	// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
	Env map[string]string
}

// S3 returns a fresh bucket of the test's own, which is emptied and removed when the
// test ends. The server is SHARE_TEST_S3_URL (http://ACCESS:SECRET@127.0.0.1:9000, or
// https://) or else a throw-away MinIO that the first call starts for the test binary.
func S3(t *testing.T) S3Bucket {
	t.Helper()
	srv, err := s3TestServer()
	if err != nil {
		t.Fatal(err)
	}
	b := srv.newBucket(t)
	t.Cleanup(func() {
		if err := srv.removeBucket(b.Name); err != nil {
			t.Errorf("remove test bucket %s: %v", b.Name, err)
		}
	})
	return b
}

// MinIOProcess is a throw-away MinIO server of one test, which the test may stop and
// start again on the same port and data to see how the service lives through an
// object store outage.
type MinIOProcess struct {
	outage
	m *minioServer
}

// StartMinIO starts a throw-away MinIO for t and removes it when the test ends.
func StartMinIO(t *testing.T) *MinIOProcess {
	t.Helper()
	m, o := startOutage(t, newMinIO)
	return &MinIOProcess{outage: o, m: m}
}

// Bucket creates a fresh bucket on the running server. It goes with the server, so it
// needs no cleanup while the server is down.
func (p *MinIOProcess) Bucket(t *testing.T) S3Bucket {
	t.Helper()
	return p.m.newBucket(t)
}

// Backend is a Postgres backend (PostgresBackend) whose object store is a fresh bucket of
// this server, for a test that stops the store under a running service.
func (p *MinIOProcess) Backend(t *testing.T) Backend {
	t.Helper()
	b := PostgresBackend(t)
	b.BlobEnv = p.Bucket(t).Env
	return b
}

var (
	s3Once sync.Once
	s3Srv  s3Server
	s3Err  error
)

// s3TestServer returns SHARE_TEST_S3_URL's server or starts a throw-away MinIO, which
// testkit.Main stops and removes.
func s3TestServer() (s3Server, error) {
	s3Once.Do(func() {
		if u := os.Getenv("SHARE_TEST_S3_URL"); u != "" {
			s3Srv, s3Err = parseS3Server(u)
			return
		}
		m, err := newMinIO()
		if err != nil {
			s3Err = err
			return
		}
		addCleanup(m.remove)
		s3Srv, s3Err = m.s3Server, m.start()
	})
	return s3Srv, s3Err
}

// s3Server is an S3 server and its root credentials.
type s3Server struct {
	endpoint, accessKey, secretKey string
	tls                            bool
}

func parseS3Server(raw string) (s3Server, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User == nil {
		return s3Server{}, errors.New("SHARE_TEST_S3_URL: want http://ACCESS:SECRET@host:port or https://…")
	}
	secret, _ := u.User.Password()
	return s3Server{endpoint: u.Host, accessKey: u.User.Username(), secretKey: secret, tls: u.Scheme == "https"}, nil
}

func (s s3Server) client() (*minio.Client, error) {
	return minio.New(s.endpoint, &minio.Options{Creds: credentials.NewStaticV4(s.accessKey, s.secretKey, ""), Secure: s.tls})
}

// newBucket creates a bucket with a random name.
func (s s3Server) newBucket(t *testing.T) S3Bucket {
	t.Helper()
	c, err := s.client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := randomName("sntest-")
	if err := c.MakeBucket(ctx, name, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("create test bucket: %v", err)
	}
	b := S3Bucket{Name: name, URL: "s3://" + name + "?endpoint=" + s.endpoint + "&tls=" + strconv.FormatBool(s.tls),
		Endpoint: s.endpoint, AccessKey: s.accessKey, SecretKey: s.secretKey}
	b.Env = map[string]string{"SHARE_BLOB_URL": b.URL, "AWS_ACCESS_KEY_ID": s.accessKey, "AWS_SECRET_ACCESS_KEY": s.secretKey}
	return b
}

// removeBucket deletes the bucket's objects and incomplete uploads, then the bucket.
func (s s3Server) removeBucket(name string) error {
	c, err := s.client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for u := range c.ListIncompleteUploads(ctx, name, "", true) {
		if u.Err != nil {
			return u.Err
		}
		if err := c.RemoveIncompleteUpload(ctx, name, u.Key); err != nil {
			return err
		}
	}
	results, err := c.RemoveObjectsWithIter(ctx, name, c.ListObjectsIter(ctx, name, minio.ListObjectsOptions{Recursive: true}),
		minio.RemoveObjectsOptions{})
	if err != nil {
		return err
	}
	for r := range results {
		if r.Err != nil {
			return r.Err
		}
	}
	return c.RemoveBucket(ctx, name)
}

// minioServer is a throw-away MinIO: a folder with its data and log, random
// credentials, a loopback port and, while it runs, its process.
type minioServer struct {
	s3Server
	bin, dir string
	process
}

func newMinIO() (*minioServer, error) {
	bin, err := minioBinary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "sharenote-minio-")
	if err != nil {
		return nil, err
	}
	return &minioServer{s3Server: s3Server{endpoint: FreeAddr(), accessKey: "sntest" + cuid.New()[:8], secretKey: cuid.New()},
		bin: bin, dir: dir}, nil
}

// start starts the server and waits until it is ready to serve requests.
func (m *minioServer) start() error {
	logPath := filepath.Join(m.dir, "minio.log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(m.bin, "server", "--quiet", "--address", m.endpoint, "--console-address", FreeAddr(),
		filepath.Join(m.dir, "data"))
	// No console, no update checks: nothing but the S3 API on loopback.
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+m.accessKey, "MINIO_ROOT_PASSWORD="+m.secretKey,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start minio: %w", err)
	}
	m.cmd = cmd
	// The health check answers 200 a moment before the S3 API does: until its object layer
	// is up, MinIO refuses requests with "Server not initialized yet". Ready is when an
	// authenticated listing answers.
	c, err := m.client()
	if err != nil {
		m.kill()
		return err
	}
	ready := "http://" + m.endpoint + "/minio/health/ready"
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if Responds(ready, http.StatusOK) && m.lists(c) {
			return nil
		}
	}
	m.kill()
	return fmt.Errorf("throw-away minio did not start on %s; see %s", m.endpoint, logPath)
}

// lists reports whether the server answers an authenticated listing of its buckets.
func (m *minioServer) lists(c *minio.Client) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.ListBuckets(ctx)
	return err == nil
}

func (m *minioServer) remove() {
	m.kill()
	_ = os.RemoveAll(m.dir)
}

// minioBinary finds the MinIO server: SHARE_TEST_MINIO_BIN (the Makefile sets it), a
// .tools/minio-<version> in the working directory or above it (`make minio` builds it
// there), or minio on PATH.
func minioBinary() (string, error) {
	if p := os.Getenv("SHARE_TEST_MINIO_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("no MinIO at SHARE_TEST_MINIO_BIN=%s: run `make minio`", p)
		}
		return p, nil
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if found, _ := filepath.Glob(filepath.Join(dir, ".tools", "minio-*")); len(found) > 0 {
				return found[len(found)-1], nil
			}
			if dir == filepath.Dir(dir) {
				break
			}
		}
	}
	if p, err := exec.LookPath("minio"); err == nil {
		return p, nil
	}
	return "", errors.New("no MinIO: run `make minio` (or put minio on PATH), or set SHARE_TEST_S3_URL")
}
