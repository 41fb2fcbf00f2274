package testkit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// TestS3BucketGoesWithTheTest: the bucket S3 made is there during the test and gone,
// with its objects and incomplete uploads, after it.
func TestS3BucketGoesWithTheTest(t *testing.T) {
	ctx := context.Background()
	var b S3Bucket
	t.Run("test", func(t *testing.T) {
		b = S3(t)
		c := bucketClient(t, b)
		if _, err := c.PutObject(ctx, b.Name, "u/n/x", strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := (minio.Core{Client: c}).NewMultipartUpload(ctx, b.Name, "u/n/part", minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		if b.Env["SHARE_BLOB_URL"] != b.URL || b.Env["AWS_ACCESS_KEY_ID"] != b.AccessKey || b.Env["AWS_SECRET_ACCESS_KEY"] != b.SecretKey {
			t.Errorf("Env = %v does not configure the bucket %s", b.Env, b.URL)
		}
	})
	if ok, err := bucketClient(t, b).BucketExists(ctx, b.Name); err != nil || ok {
		t.Errorf("after the test, BucketExists(%s) = %v, %v", b.Name, ok, err)
	}
}

// TestMinIOSurvivesStopAndStart: a stopped MinIO refuses requests; started again, it has
// kept its buckets and objects.
func TestMinIOSurvivesStopAndStart(t *testing.T) {
	ctx := context.Background()
	m := StartMinIO(t)
	b := m.Bucket(t)
	c := bucketClient(t, b)
	if _, err := c.PutObject(ctx, b.Name, "kept", strings.NewReader("kept"), 4, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	m.Stop()
	down, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := c.StatObject(down, b.Name, "kept", minio.StatObjectOptions{}); err == nil {
		t.Error("a stopped MinIO answers")
	}
	m.Start()
	if info, err := c.StatObject(ctx, b.Name, "kept", minio.StatObjectOptions{}); err != nil || info.Size != 4 {
		t.Errorf("after the restart, Stat = %+v, %v", info, err)
	}
}

func TestMinIOBinaryIsFoundInToolsAbove(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, ".tools", "minio-v1")
	if err := os.MkdirAll(filepath.Join(root, "services", "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, nil, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SHARE_TEST_MINIO_BIN", "")
	t.Setenv("PATH", t.TempDir())
	t.Chdir(filepath.Join(root, "services", "x"))
	if got, err := minioBinary(); got != bin || err != nil {
		t.Errorf("minioBinary() = %q, %v, want %s", got, err, bin)
	}
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	if _, err := minioBinary(); err == nil || !strings.Contains(err.Error(), "make minio") {
		t.Errorf("without a binary, minioBinary() = %v, want an error naming make minio", err)
	}
}

func bucketClient(t *testing.T, b S3Bucket) *minio.Client {
	t.Helper()
	c, err := s3Server{endpoint: b.Endpoint, accessKey: b.AccessKey, secretKey: b.SecretKey}.client()
	if err != nil {
		t.Fatal(err)
	}
	return c
}
