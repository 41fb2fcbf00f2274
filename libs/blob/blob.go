// Package blob is the seam of the object store that keeps image bytes by key: the Store
// interface and its errors, which the note domain uses. Its implementations, an
// S3-compatible bucket (AWS S3, MinIO, Ceph RGW, R2, GCS interoperability) and a
// directory of files (the embedded default), are in package blobstore, which speaks HTTP
// and so stays out of the domain's imports. SHARE_BLOB_URL chooses
// (docs/configuration.md):
//
//	file://<dir>
//	s3://<bucket>?endpoint=<host:port>&region=<r>&tls=<true|false>
//
// Keys are slash-separated paths of [A-Za-z0-9_-] segments, at most 1024 bytes; the
// caller makes them, and both stores refuse any other key (and List any prefix no such
// key can have).
package blob

import (
	"context"
	"errors"
	"io"
	"time"
)

// Store keeps objects by key. Every method returns ErrUnavailable (wrapped) when the
// store cannot be reached or answers with a server error, so that callers can answer 503,
// and ErrNotFound when the object does not exist.
type Store interface {
	// Put stores everything r yields under key, with content type contentType. size is the
	// exact number of bytes r yields, or -1 when unknown. It writes all or nothing: when r
	// fails, ctx ends or the store fails, no object is left under key (an interrupted
	// process may leave one; the reaper's orphan sweep collects it). Memory held is bounded
	// by a constant (PutBuffer), whatever the size.
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (Info, error)
	// Get opens the object's bytes from offset off, n of them (n < 0: to the end); a
	// range past the end reads what there is, perhaps nothing. The Info describes the
	// whole object. The caller closes the reader.
	Get(ctx context.Context, key string, off, n int64) (io.ReadCloser, Info, error)
	// Stat describes the object.
	Stat(ctx context.Context, key string) (Info, error)
	// Delete removes the objects; a key that does not exist is not an error.
	Delete(ctx context.Context, keys ...string) error
	// List calls fn with every object whose key starts with prefix, in key order, until fn
	// returns an error (which List returns).
	List(ctx context.Context, prefix string, fn func(Info) error) error
	// Ping checks that the store answers (readiness reports it).
	Ping(ctx context.Context) error
	// String names the store for logs, without credentials.
	String() string
}

// Info describes one object.
type Info struct {
	Key  string
	Size int64
	// ContentType is what Put was given, where the store keeps it: the S3 store's Stat
	// and Get report it; the file store and listings leave it empty.
	ContentType string
	// ModTime is when the object was stored; zero in what the S3 store's Put returns.
	ModTime time.Time
}

// PutBuffer bounds the memory one Put holds: the file store copies through a small
// buffer; the S3 store sends objects of unknown size as a multipart upload of parts of
// this size, the smallest S3 allows, one part in memory at a time.
const PutBuffer = 5 << 20

var (
	// ErrNotFound is an object that does not exist.
	ErrNotFound = errors.New("blob: object not found")
	// ErrUnavailable is a store that cannot be reached or failed on its side. It reports
	// Unavailable(), as the database's and Redis's outages do, so that every edge answers
	// 503 with Retry-After (libs/errs).
	ErrUnavailable error = unavailable("blob: object store unavailable")
)

type unavailable string

func (e unavailable) Error() string   { return string(e) }
func (unavailable) Unavailable() bool { return true }
