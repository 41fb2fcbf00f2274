package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/sharenote/sharenote/libs/blob"
)

// S3 keeps objects in a bucket of an S3-compatible store, through minio-go.
//
// Put sends an object of known size (up to 5 GiB) as one streamed PUT, which S3 stores
// whole or not at all, and one of unknown size as a multipart upload of blob.PutBuffer-sized
// parts, one part in memory at a time. When a multipart upload fails (the reader, ctx or the store),
// minio-go aborts it, detached from ctx, so that its parts go too; if the store cannot
// be reached for the abort, the parts stay invisible to Get and List until the bucket's
// AbortIncompleteMultipartUpload lifecycle rule removes them. Put's blob.Info has no ModTime.
type S3 struct {
	client *minio.Client
	bucket string
	name   string
}

var _ blob.Store = (*S3)(nil)

const (
	// awsEndpoint is the endpoint when the URL names none: AWS S3, with the bucket in
	// the host name (virtual-host style).
	awsEndpoint = "s3.amazonaws.com"
	// maxSinglePut is the largest object S3 takes in one PUT.
	maxSinglePut = 5 << 30
	// s3Attempts bounds the attempts of a request that fails on the network or with a
	// 5xx (minio-go backs off between them), so that an outage is reported in about a
	// second rather than retried for many.
	s3Attempts = 3
)

// s3Config is what an s3:// URL says.
type s3Config struct {
	bucket, endpoint, region string
	tls                      bool
}

// openS3 makes the client; it sends no request.
func openS3(cfg s3Config, getenv func(string) string) (*S3, error) {
	creds, err := s3Credentials(getenv)
	if err != nil {
		return nil, err
	}
	endpoint, lookup := cfg.endpoint, minio.BucketLookupPath
	if endpoint == "" {
		endpoint, lookup = awsEndpoint, minio.BucketLookupDNS
	}
	// minio-go's transport, with a shorter dial and more idle connections for a server's
	// concurrent requests. There is no overall client timeout: a Get's body streams as
	// long as its caller reads it, which the caller's ctx bounds.
	tr, err := minio.DefaultTransport(cfg.tls)
	if err != nil {
		return nil, err
	}
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.ResponseHeaderTimeout = 30 * time.Second
	tr.MaxIdleConnsPerHost = 64
	client, err := minio.New(endpoint, &minio.Options{Creds: creds, Secure: cfg.tls, Transport: tr,
		Region: cfg.region, BucketLookup: lookup, MaxRetries: s3Attempts})
	if err != nil {
		return nil, err
	}
	return &S3{client: client, bucket: cfg.bucket, name: "s3://" + cfg.bucket + " (endpoint " + endpoint + ")"}, nil
}

// s3Credentials are the static keys getenv holds, or else the AWS chain: the process's
// environment, the shared credentials file (~/.aws/credentials, AWS_PROFILE), then IAM
// (web identity from AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN as on EKS, the ECS
// and EC2 metadata endpoints). Nothing is fetched until the first request.
func s3Credentials(getenv func(string) string) (*credentials.Credentials, error) {
	id, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
	switch {
	case id != "" && secret != "":
		return credentials.NewStaticV4(id, secret, getenv("AWS_SESSION_TOKEN")), nil
	case id != "" || secret != "":
		return nil, errors.New("set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or neither for the AWS credential chain")
	}
	return credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{}, &credentials.FileAWSCredentials{}, &credentials.IAM{}}), nil
}

// Put stores the object with its content type.
func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (blob.Info, error) {
	if err := checkKey(key); err != nil {
		return blob.Info{}, err
	}
	src := &sourceReader{r: r}
	up, err := s.client.PutObject(ctx, s.bucket, key, src, size, minio.PutObjectOptions{
		ContentType:      contentType,
		DisableMultipart: size >= 0 && size <= maxSinglePut,
		PartSize:         blob.PutBuffer,
		// One part at a time (ConcurrentStreamParts is off).
		NumThreads: 1,
	})
	if src.err != nil {
		// The reader's failure, which the transport may have wrapped as a network error.
		return blob.Info{}, fmt.Errorf("blob: put %s: read: %w", key, src.err)
	}
	if err != nil {
		return blob.Info{}, s3Error("put "+key, err)
	}
	return blob.Info{Key: key, Size: up.Size, ContentType: contentType}, nil
}

// sourceReader keeps the error of the reader it wraps. Wrapping also hides io.ReaderAt
// and io.Seeker, which would lead minio-go to parallel part uploads.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

// Get sends one ranged GET; the blob.Info describes the whole object. A range that starts at
// or past the end reads nothing, as from a file.
func (s *S3) Get(ctx context.Context, key string, off, n int64) (io.ReadCloser, blob.Info, error) {
	if err := checkKey(key); err != nil {
		return nil, blob.Info{}, err
	}
	if off < 0 {
		return nil, blob.Info{}, fmt.Errorf("blob: get %s: negative offset %d", key, off)
	}
	if n == 0 {
		return s.nothing(ctx, key)
	}
	var opts minio.GetObjectOptions
	if off > 0 || n > 0 {
		end := int64(0) // with off > 0: to the end
		if n > 0 {
			end = off + n - 1
		}
		if err := opts.SetRange(off, end); err != nil {
			return nil, blob.Info{}, err
		}
	}
	body, oi, h, err := minio.Core{Client: s.client}.GetObject(ctx, s.bucket, key, opts)
	if minio.ToErrorResponse(err).Code == minio.InvalidRange {
		return s.nothing(ctx, key)
	}
	if err != nil {
		return nil, blob.Info{}, s3Error("get "+key, err)
	}
	info := s3Info(oi)
	// A ranged answer's Content-Length is the range's; the total follows the slash of
	// Content-Range ("bytes 0-99/1234").
	if _, total, ok := strings.Cut(h.Get("Content-Range"), "/"); ok {
		if size, err := strconv.ParseInt(total, 10, 64); err == nil {
			info.Size = size
		}
	}
	return body, info, nil
}

// nothing is an empty read of an object that exists.
func (s *S3) nothing(ctx context.Context, key string) (io.ReadCloser, blob.Info, error) {
	info, err := s.Stat(ctx, key)
	if err != nil {
		return nil, blob.Info{}, err
	}
	return http.NoBody, info, nil
}

// Stat sends a HEAD.
func (s *S3) Stat(ctx context.Context, key string) (blob.Info, error) {
	if err := checkKey(key); err != nil {
		return blob.Info{}, err
	}
	oi, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return blob.Info{}, s3Error("stat "+key, err)
	}
	return s3Info(oi), nil
}

// Delete sends batches of up to 1000 keys (S3's DeleteObjects), which report a missing
// key as deleted. It checks every key before it sends any.
func (s *S3) Delete(ctx context.Context, keys ...string) error {
	objs := make([]minio.ObjectInfo, len(keys))
	for i, key := range keys {
		if err := checkKey(key); err != nil {
			return err
		}
		objs[i].Key = key
	}
	results, err := s.client.RemoveObjectsWithIter(ctx, s.bucket, slices.Values(objs), minio.RemoveObjectsOptions{})
	if err != nil {
		return s3Error("delete", err)
	}
	for res := range results {
		if res.Err != nil && minio.ToErrorResponse(res.Err).Code != minio.NoSuchKey {
			return s3Error("delete "+res.ObjectName, res.Err)
		}
	}
	return ctx.Err()
}

// List pages through ListObjectsV2, which lists in key order.
func (s *S3) List(ctx context.Context, prefix string, fn func(blob.Info) error) error {
	if err := checkPrefix(prefix); err != nil {
		return err
	}
	// Cancelling ends minio-go's listing when fn stops it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for o := range s.client.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return s3Error("list "+prefix, o.Err)
		}
		if err := fn(s3Info(o)); err != nil {
			return err
		}
	}
	return nil
}

// Ping checks that the bucket exists.
func (s *S3) Ping(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return s3Error("ping", err)
	}
	if !ok {
		return fmt.Errorf("blob: bucket %q does not exist in %s", s.bucket, s.name)
	}
	return nil
}

// String names the bucket and the endpoint.
func (s *S3) String() string { return s.name }

func s3Info(o minio.ObjectInfo) blob.Info {
	return blob.Info{Key: o.Key, Size: o.Size, ContentType: o.ContentType, ModTime: o.LastModified}
}

// s3Error translates err, the failure of what (an operation and its key): NoSuchKey is
// blob.ErrNotFound; a 5xx, a network error or a timeout is blob.ErrUnavailable; the caller's
// cancellation and the rest (access denied, a missing bucket) stay as they are.
func s3Error(what string, err error) error {
	resp := minio.ToErrorResponse(err)
	var netErr net.Error
	switch {
	case resp.Code == minio.NoSuchKey:
		return fmt.Errorf("%w: s3 %s", blob.ErrNotFound, what)
	case errors.Is(err, context.Canceled): // the caller gave up: not the store's failure
	case resp.StatusCode >= 500, errors.As(err, &netErr), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, io.ErrUnexpectedEOF),
		// A bucket not made yet (the chart's bucket Job runs after the install) is an
		// outage to retry, not a failure of the request.
		resp.Code == minio.NoSuchBucket:
		return fmt.Errorf("%w: s3 %s: %w", blob.ErrUnavailable, what, err)
	}
	return fmt.Errorf("blob: s3 %s: %w", what, err)
}
