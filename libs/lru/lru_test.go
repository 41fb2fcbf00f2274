package lru_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/sharenote/sharenote/libs/lru"
)

func TestLeastRecentlyUsedEntryIsEvictedPastTheEntryBound(t *testing.T) {
	c := lru.New[[]byte](2, 1<<20, lru.Bytes)
	c.Add("a", []byte("1"))
	c.Add("b", []byte("2"))
	if _, ok := c.Get("a"); !ok { // a is now more recent than b.
		t.Fatal("a missing")
	}
	c.Add("c", []byte("3"))
	if _, ok := c.Get("b"); ok {
		t.Error("b survived although it was the least recently used")
	}
	for _, k := range []string{"a", "c"} {
		if _, ok := c.Get(k); !ok {
			t.Errorf("%s was evicted", k)
		}
	}
	if c.Len() != 2 {
		t.Errorf("Len = %d, want 2", c.Len())
	}
}

func TestEntriesAreEvictedPastTheByteBound(t *testing.T) {
	c := lru.New[[]byte](100, 10, lru.Bytes)
	c.Add("a", make([]byte, 4))
	c.Add("b", make([]byte, 4))
	c.Add("c", make([]byte, 4))
	if _, ok := c.Get("a"); ok || c.Len() != 2 || c.Size() != 8 {
		t.Errorf("a kept = %v, Len = %d, Bytes = %d; want a evicted, 2 entries, 8 bytes", ok, c.Len(), c.Size())
	}
	c.Add("huge", make([]byte, 11))
	if _, ok := c.Get("huge"); ok || c.Len() != 2 {
		t.Error("a value larger than the byte bound was stored or evicted the others")
	}
}

func TestAddingAnExistingKeyReplacesItsValue(t *testing.T) {
	c := lru.New[[]byte](10, 100, lru.Bytes)
	c.Add("a", []byte("old"))
	c.Add("a", []byte("newer"))
	if v, _ := c.Get("a"); string(v) != "newer" || c.Len() != 1 || c.Size() != 5 {
		t.Errorf("value %q, Len %d, Bytes %d", v, c.Len(), c.Size())
	}
}

func TestConcurrentUseKeepsTheBounds(t *testing.T) {
	c := lru.New[[]byte](16, 1000, lru.Bytes)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				k := fmt.Sprint((g*7 + i) % 40)
				if _, ok := c.Get(k); !ok {
					c.Add(k, make([]byte, i%100))
				}
			}
		})
	}
	wg.Wait()
	if c.Len() > 16 || c.Size() > 1000 {
		t.Errorf("Len %d, Bytes %d past the bounds", c.Len(), c.Size())
	}
}
