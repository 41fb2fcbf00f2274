package blobstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/blob/blobstore"
)

// TestOpenURLs: the forms of SHARE_BLOB_URL open the store they name, without a request;
// anything else fails with an error that says what is wrong.
func TestOpenURLs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	keys := map[string]string{"AWS_ACCESS_KEY_ID": "AKIDSHARENOTE", "AWS_SECRET_ACCESS_KEY": "secret-sharenote"}
	for _, c := range []struct {
		name, url string
		env       map[string]string
		// want is the store's String, or a part of the error.
		want string
		ok   bool
	}{
		{"absolute directory", "file://" + filepath.Join(dir, "abs"), nil, "file://" + filepath.Join(dir, "abs"), true},
		{"relative directory", "file://.data/blobs", nil, "file://" + filepath.Join(dir, ".data", "blobs"), true},
		{"MinIO", "s3://images?endpoint=127.0.0.1:9000&region=us-east-1&tls=false", keys, "s3://images (endpoint 127.0.0.1:9000)", true},
		{"an endpoint without port", "s3://images?endpoint=minio.example.com", keys, "s3://images (endpoint minio.example.com)", true},
		{"AWS", "s3://my-images", keys, "s3://my-images (endpoint s3.amazonaws.com)", true},
		{"AWS with the credential chain", "s3://my-images?region=eu-west-1", nil, "s3://my-images (endpoint s3.amazonaws.com)", true},

		{"no directory", "file://", nil, "needs a directory", false},
		{"a file for a directory", "file://" + filepath.Join(dir, "plain"), nil, "not a directory", false},
		{"another scheme", "gs://images", nil, "neither file://<dir> nor s3://<bucket>", false},
		{"no scheme", "/var/lib/blobs", nil, "neither file://<dir> nor s3://<bucket>", false},
		{"no bucket", "s3://?endpoint=127.0.0.1:9000", keys, `bucket ""`, false},
		{"a bucket of capitals", "s3://Images", keys, `bucket "Images"`, false},
		{"a bucket with a port", "s3://images:9000", keys, `bucket "images:9000"`, false},
		{"a path", "s3://images/prefix", keys, `path "/prefix"`, false},
		{"credentials in the URL", "s3://key:secret@images", nil, "credentials do not go in the URL", false},
		{"an unknown parameter", "s3://images?endpont=127.0.0.1:9000", keys, `unknown parameter "endpont"`, false},
		{"a repeated parameter", "s3://images?tls=true&tls=false", keys, "tls: give it once", false},
		{"an empty parameter", "s3://images?region=", keys, "region: give it once, with a value", false},
		{"an endpoint with a scheme", "s3://images?endpoint=http://127.0.0.1:9000", keys, "without a scheme", false},
		{"an endpoint with a path", "s3://images?endpoint=127.0.0.1:9000/x", keys, "want host:port", false},
		{"an endpoint with a bad port", "s3://images?endpoint=127.0.0.1:port", keys, "want host:port", false},
		{"tls not a boolean", "s3://images?tls=yes", keys, "tls=yes: want true or false", false},
		{"a bad escape", "s3://images?region=%zz", keys, "invalid URL escape", false},
		{"half the keys", "s3://images", map[string]string{"AWS_ACCESS_KEY_ID": "AKIDSHARENOTE"}, "set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, "plain"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := blobstore.Open(context.Background(), c.url, func(k string) string { return c.env[k] })
			if !c.ok {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("Open(%q) = %v, want an error with %q", c.url, err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(%q) = %v", c.url, err)
			}
			if got := s.String(); got != c.want {
				t.Errorf("String() = %q, want %q", got, c.want)
			}
			if strings.Contains(s.String(), "SHARENOTE") || strings.Contains(s.String(), "sharenote") {
				t.Errorf("String() = %q shows the credentials", s.String())
			}
		})
	}
}
