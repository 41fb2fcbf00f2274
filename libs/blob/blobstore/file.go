package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/sharenote/sharenote/libs/blob"
)

// Files keeps objects as files under a directory, the embedded default: key a/b/c is
// the file <dir>/a/b/c (files 0600, directories 0700). Put writes a temporary file in
// <dir>/.tmp, which no key can name, syncs it and renames it into place, so that a
// reader sees the whole object or none; Delete removes directories it leaves empty.
//
// Files keep no content type: blob.Info.ContentType is empty, and the caller keeps the
// media type with its own record of the object (sniffing would disagree with it for
// SVG and text). One directory cannot hold both key a/b and key a/b/c.
type Files struct {
	root string
	tmp  string // root/.tmp: the files of Puts in progress
}

var _ blob.Store = (*Files)(nil)

// staleTemp is how old a temporary file must be for openFiles to take it for the
// leftover of an interrupted process: far beyond any upload.
const staleTemp = 24 * time.Hour

// openFiles makes dir (0700) if it is missing, removes stale temporary files and checks
// that dir is writable.
func openFiles(ctx context.Context, dir string) (*Files, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	f := &Files{root: root, tmp: filepath.Join(root, ".tmp")}
	if err := os.MkdirAll(f.tmp, 0o700); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(f.tmp)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleTemp {
			_ = os.Remove(filepath.Join(f.tmp, e.Name()))
		}
	}
	if err := f.Ping(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// Put copies r into a temporary file through io.Copy's 32 KiB buffer and renames it to
// the key's path once complete and synced; the directory is synced after the rename.
// It checks ctx between reads of r. contentType is not kept.
func (f *Files) Put(ctx context.Context, key string, r io.Reader, size int64, _ string) (blob.Info, error) {
	p, err := f.path(key)
	if err != nil {
		return blob.Info{}, err
	}
	tmp, err := os.CreateTemp(f.tmp, "put-*")
	if err != nil {
		return blob.Info{}, fmt.Errorf("blob: put %s: %w", key, err)
	}
	fi, err := f.write(ctx, tmp, p, r, size)
	if err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return blob.Info{}, fmt.Errorf("blob: put %s: %w", key, err)
	}
	return fileInfo(key, fi), nil
}

// write fills tmp from r, checks its size and moves it to p.
func (f *Files) write(ctx context.Context, tmp *os.File, p string, r io.Reader, size int64) (os.FileInfo, error) {
	src := io.Reader(ctxReader{ctx, r})
	if size >= 0 {
		src = io.LimitReader(src, size+1)
	}
	n, err := io.Copy(tmp, src)
	switch {
	case err != nil:
		return nil, err
	case size >= 0 && n > size:
		return nil, fmt.Errorf("the reader yields more than size %d bytes", size)
	case size >= 0 && n < size:
		return nil, fmt.Errorf("the reader yields %d bytes, not size %d", n, size)
	}
	if err := tmp.Sync(); err != nil {
		return nil, err
	}
	fi, err := tmp.Stat()
	if err != nil {
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := place(tmp.Name(), p); err != nil {
		return nil, err
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		_ = os.Remove(p)
		return nil, err
	}
	return fi, nil
}

// place renames tmp to p, making p's directory first. A Delete may prune that directory
// between the two steps (it was empty); then both are done again.
func place(tmp, p string) (err error) {
	for range 3 {
		if err = os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err = os.Rename(tmp, p); !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Get opens the file and reads the range through an io.SectionReader; the blob.Info
// describes the whole object.
func (f *Files) Get(_ context.Context, key string, off, n int64) (io.ReadCloser, blob.Info, error) {
	p, err := f.path(key)
	if err != nil {
		return nil, blob.Info{}, err
	}
	if off < 0 {
		return nil, blob.Info{}, fmt.Errorf("blob: get %s: negative offset %d", key, off)
	}
	file, err := os.Open(p)
	if err != nil {
		return nil, blob.Info{}, fileError("get", key, err)
	}
	fi, err := file.Stat()
	if err == nil && fi.IsDir() {
		err = fs.ErrNotExist
	}
	if err != nil {
		_ = file.Close()
		return nil, blob.Info{}, fileError("get", key, err)
	}
	length := max(fi.Size()-off, 0)
	if n >= 0 {
		length = min(length, n)
	}
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(file, off, length), file}, fileInfo(key, fi), nil
}

// Stat describes the file.
func (f *Files) Stat(_ context.Context, key string) (blob.Info, error) {
	p, err := f.path(key)
	if err != nil {
		return blob.Info{}, err
	}
	fi, err := os.Stat(p)
	if err == nil && fi.IsDir() {
		err = fs.ErrNotExist
	}
	if err != nil {
		return blob.Info{}, fileError("stat", key, err)
	}
	return fileInfo(key, fi), nil
}

// Delete removes the files, then the directories they leave empty. It checks every key
// before it removes anything.
func (f *Files) Delete(_ context.Context, keys ...string) error {
	paths := make([]string, len(keys))
	for i, key := range keys {
		p, err := f.path(key)
		if err != nil {
			return err
		}
		paths[i] = p
	}
	for i, p := range paths {
		if err := os.Remove(p); err != nil && !notExist(err) {
			return fmt.Errorf("blob: delete %s: %w", keys[i], err)
		}
		// Removing a directory fails while it holds anything, which ends the pruning.
		for dir := filepath.Dir(p); dir != f.root; dir = filepath.Dir(dir) {
			if os.Remove(dir) != nil {
				break
			}
		}
	}
	return nil
}

// List reads the directories under the prefix in key order, in which directory a sorts
// as "a/" (after "a-b"), as S3 lists. Files and directories removed meanwhile are
// skipped.
func (f *Files) List(ctx context.Context, prefix string, fn func(blob.Info) error) error {
	if err := checkPrefix(prefix); err != nil {
		return err
	}
	dir, _ := path.Split(prefix)
	return f.walk(ctx, strings.TrimSuffix(dir, "/"), prefix, fn)
}

// walk lists the keys under prefix in directory dir (a key, or "" for the root).
func (f *Files) walk(ctx context.Context, dir, prefix string, fn func(blob.Info) error) error {
	entries, err := os.ReadDir(filepath.Join(f.root, filepath.FromSlash(dir)))
	if notExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("blob: list %s: %w", prefix, err)
	}
	// names sorts the entries as their keys sort: a directory's name ends in "/".
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		switch {
		case checkSegment(e.Name()) != nil: // .tmp, or nothing a key names
		case e.IsDir():
			names = append(names, e.Name()+"/")
		case e.Type().IsRegular():
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		key := name
		if dir != "" {
			key = dir + "/" + name
		}
		if sub, ok := strings.CutSuffix(key, "/"); ok {
			if strings.HasPrefix(key, prefix) || strings.HasPrefix(prefix, key) {
				if err := f.walk(ctx, sub, prefix, fn); err != nil {
					return err
				}
			}
			continue
		}
		if !strings.HasPrefix(key, prefix) {
			continue
		}
		fi, err := os.Stat(filepath.Join(f.root, filepath.FromSlash(key)))
		if notExist(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("blob: list %s: %w", prefix, err)
		}
		if err := fn(fileInfo(key, fi)); err != nil {
			return err
		}
	}
	return nil
}

// Ping creates and removes a file in the directory.
func (f *Files) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	probe, err := os.CreateTemp(f.tmp, "ping-*")
	if err != nil {
		return fmt.Errorf("blob: %s is not writable: %w", f.root, err)
	}
	_ = probe.Close()
	return os.Remove(probe.Name())
}

// String is the store's URL.
func (f *Files) String() string { return "file://" + f.root }

func (f *Files) path(key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	return filepath.Join(f.root, filepath.FromSlash(key)), nil
}

// fileError wraps err, blob.ErrNotFound when the file does not exist.
func fileError(op, key string, err error) error {
	if notExist(err) {
		return fmt.Errorf("%w: %s", blob.ErrNotFound, key)
	}
	return fmt.Errorf("blob: %s %s: %w", op, key, err)
}

// notExist is a missing file, or a missing directory on its path: a file where key a/b/c
// needs directory a/b is ENOTDIR.
func notExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func fileInfo(key string, fi os.FileInfo) blob.Info {
	return blob.Info{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}
}

// ctxReader ends a copy when its context ends, at the next read.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
