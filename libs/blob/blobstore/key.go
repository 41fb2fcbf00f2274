package blobstore

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// maxKey is S3's limit on the length of a key, which both stores keep.
const maxKey = 1024

// checkKey refuses a key that is not slash-separated [A-Za-z0-9_-] segments. No key can
// hold a dot, so none names "..", a hidden file or the file store's ".tmp".
func checkKey(key string) error {
	if len(key) > maxKey {
		return fmt.Errorf("blob: key of %d bytes, more than %d", len(key), maxKey)
	}
	for seg := range strings.SplitSeq(key, "/") {
		if err := checkSegment(seg); err != nil {
			return fmt.Errorf("blob: invalid key %q: %w", key, err)
		}
	}
	return nil
}

// checkPrefix refuses a List prefix that no valid key can start with: its complete
// segments must be valid and its last, partial one made of the same characters.
func checkPrefix(prefix string) error {
	dir, last := path.Split(prefix)
	if dir != "" {
		if err := checkKey(strings.TrimSuffix(dir, "/")); err != nil {
			return fmt.Errorf("blob: invalid prefix %q", prefix)
		}
	}
	if last != "" && checkSegment(last) != nil {
		return fmt.Errorf("blob: invalid prefix %q", prefix)
	}
	return nil
}

func checkSegment(seg string) error {
	if seg == "" {
		return errors.New("empty segment")
	}
	for _, c := range []byte(seg) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("segment %q holds %q, not one of [A-Za-z0-9_-]", seg, c)
		}
	}
	return nil
}
