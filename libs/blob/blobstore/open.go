// Package blobstore implements libs/blob's Store: Files, a directory (the embedded
// default), and S3, any S3-compatible bucket through minio-go; Open picks one from
// SHARE_BLOB_URL.
package blobstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/minio/minio-go/v7/pkg/s3utils"

	"github.com/sharenote/sharenote/libs/blob"
)

// Open returns the store rawURL names, in one of the forms of the package comment:
//
//   - file://<dir>: dir is a path as written, absolute or relative to the working
//     directory; it is made (0700) if missing and must be writable.
//   - s3://<bucket>?endpoint=<host:port>&region=<r>&tls=<true|false>: every parameter
//     is optional. Without endpoint the store is AWS S3, the bucket addressed in the
//     host name; with one, in the path, as MinIO and most S3-compatible stores want.
//     Without region minio-go asks the bucket for it; tls defaults to true. Open sends
//     no request (Ping checks the bucket). getenv supplies the static keys
//     AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN); without them
//     the AWS credential chain finds some.
//
// Any other form, an unknown or repeated parameter, or credentials in the URL is an
// error that says what is wrong.
func Open(ctx context.Context, rawURL string, getenv func(string) string) (blob.Store, error) {
	if dir, ok := strings.CutPrefix(rawURL, "file://"); ok {
		if dir == "" {
			return nil, errors.New("blob: file:// needs a directory: file://<dir>")
		}
		f, err := openFiles(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("blob: %s: %w", rawURL, err)
		}
		return f, nil
	}
	if !strings.HasPrefix(rawURL, "s3://") {
		return nil, fmt.Errorf("blob: %q is neither file://<dir> nor s3://<bucket>?…", rawURL)
	}
	cfg, err := parseS3(rawURL)
	if err != nil {
		return nil, fmt.Errorf("blob: %s: %w", rawURL, err)
	}
	s, err := openS3(cfg, getenv)
	if err != nil {
		return nil, fmt.Errorf("blob: %s: %w", rawURL, err)
	}
	return s, nil
}

// parseS3 reads s3://<bucket>?endpoint=<host:port>&region=<r>&tls=<true|false>.
func parseS3(rawURL string) (s3Config, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return s3Config{}, err
	}
	cfg := s3Config{bucket: u.Host, tls: true}
	switch {
	case u.User != nil:
		return s3Config{}, errors.New("credentials do not go in the URL: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	case u.Path != "" && u.Path != "/":
		return s3Config{}, fmt.Errorf("path %q: objects go at the bucket's root, s3://<bucket>", u.Path)
	case u.Fragment != "":
		return s3Config{}, fmt.Errorf("fragment #%s: the URL takes none", u.Fragment)
	}
	if err := s3utils.CheckValidBucketNameStrict(cfg.bucket); err != nil {
		return s3Config{}, fmt.Errorf("bucket %q: %w", cfg.bucket, err)
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return s3Config{}, err
	}
	for name, values := range query {
		if len(values) != 1 || values[0] == "" {
			return s3Config{}, fmt.Errorf("%s: give it once, with a value", name)
		}
		v := values[0]
		switch name {
		case "endpoint":
			if h, err := url.Parse("//" + v); err != nil || h.Host != v || h.User != nil {
				return s3Config{}, fmt.Errorf("endpoint=%s: want host:port, without a scheme (tls= chooses https)", v)
			}
			cfg.endpoint = v
		case "region":
			cfg.region = v
		case "tls":
			if cfg.tls, err = strconv.ParseBool(v); err != nil {
				return s3Config{}, fmt.Errorf("tls=%s: want true or false", v)
			}
		default:
			return s3Config{}, fmt.Errorf("unknown parameter %q: want endpoint, region or tls", name)
		}
	}
	return cfg, nil
}
