package noteapi_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/noteapi"
)

func TestParseRange(t *testing.T) {
	const size = 1000
	tests := []struct {
		name   string
		header string
		want   [][2]int64
		err    error
	}{
		{"a closed range", "bytes=0-99", [][2]int64{{0, 99}}, nil},
		{"an open range reads to the end", "bytes=900-", [][2]int64{{900, 999}}, nil},
		{"a suffix is the last bytes", "bytes=-10", [][2]int64{{990, 999}}, nil},
		{"a suffix longer than the body is all of it", "bytes=-5000", [][2]int64{{0, 999}}, nil},
		{"a last position past the end is the end", "bytes=990-5000", [][2]int64{{990, 999}}, nil},
		{"a last position past int64 is the end", "bytes=10-99999999999999999999999", [][2]int64{{10, 999}}, nil},
		{"the unit is case-insensitive", "Bytes=1-2", [][2]int64{{1, 2}}, nil},
		{"white space and empty elements are allowed", "bytes= 1-2 ,\t, 5-6,", [][2]int64{{1, 2}, {5, 6}}, nil},
		{"ranges come out in ascending order", "bytes=500-599,0-9", [][2]int64{{0, 9}, {500, 599}}, nil},
		{"overlapping ranges merge", "bytes=0-50,40-99,10-20", [][2]int64{{0, 99}}, nil},
		{"adjacent ranges merge", "bytes=0-9,10-19,-980", [][2]int64{{0, 999}}, nil},
		{"a gap keeps ranges apart", "bytes=0-9,11-19", [][2]int64{{0, 9}, {11, 19}}, nil},
		{"ranges past the end are dropped", "bytes=2000-,0-0", [][2]int64{{0, 0}}, nil},
		{"an empty suffix is dropped", "bytes=-0,5-5", [][2]int64{{5, 5}}, nil},
		{"another unit is ignored", "items=0-1", nil, nil},
		{"only ranges past the end are unsatisfiable", "bytes=1000-,5000-6000", nil, noteapi.ErrUnsatisfiable},
		{"an empty suffix alone is unsatisfiable", "bytes=-0", nil, noteapi.ErrUnsatisfiable},
		{"last before first is malformed", "bytes=5-4", nil, noteapi.ErrBadRange},
		{"no ranges is malformed", "bytes=", nil, noteapi.ErrBadRange},
		{"only commas is malformed", "bytes=,,", nil, noteapi.ErrBadRange},
		{"no equals sign is malformed", "bytes", nil, noteapi.ErrBadRange},
		{"no dash is malformed", "bytes=5", nil, noteapi.ErrBadRange},
		{"a sign is malformed", "bytes=+1-2", nil, noteapi.ErrBadRange},
		{"a negative suffix is malformed", "bytes=--1", nil, noteapi.ErrBadRange},
		{"a space inside a number is malformed", "bytes=1 0-20", nil, noteapi.ErrBadRange},
		{"a second dash is malformed", "bytes=1-2-3", nil, noteapi.ErrBadRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := noteapi.ParseRange(tt.header, size)
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Fatalf("ParseRange(%q) error = %v, want %v", tt.header, err, tt.err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseRange(%q) = %v, want %v", tt.header, got, tt.want)
			}
		})
	}
	t.Run("an empty body satisfies no range", func(t *testing.T) {
		for _, h := range []string{"bytes=0-", "bytes=-1", "bytes=0-0"} {
			if _, err := noteapi.ParseRange(h, 0); !errors.Is(err, noteapi.ErrUnsatisfiable) {
				t.Errorf("ParseRange(%q, 0) error = %v, want unsatisfiable", h, err)
			}
		}
	})
}

// FuzzParseRange: whatever the header, the ranges are inside the body, ascending, neither
// overlapping nor adjacent, and no more than the header names; every byte the header asks
// for (within the body) is in one of them.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"bytes=0-99", "bytes=-5,3-", "bytes=1-2,,4-4, 3-3", "bytes=99999999999999999999-", "items=1-2", "bytes=5-4"} {
		f.Add(s, int64(100))
	}
	f.Fuzz(func(t *testing.T, header string, size int64) {
		size = max(size, 0) % 4096
		got, err := noteapi.ParseRange(header, size)
		if err != nil {
			if got != nil {
				t.Fatalf("ranges %v with error %v", got, err)
			}
			return
		}
		if len(got) > strings.Count(header, "-") {
			t.Fatalf("%d ranges from %q", len(got), header)
		}
		covered := make([]bool, size)
		for i, r := range got {
			if r[0] < 0 || r[1] < r[0] || r[1] >= size {
				t.Fatalf("range %v of a %d-byte body", r, size)
			}
			if i > 0 && r[0] <= got[i-1][1]+1 {
				t.Fatalf("ranges %v and %v overlap or touch", got[i-1], r)
			}
			for b := r[0]; b <= r[1]; b++ {
				covered[b] = true
			}
		}
		if got == nil {
			return
		}
		// Every range-spec that parses on its own is covered.
		_, set, _ := strings.Cut(header, "=")
		for spec := range strings.SplitSeq(set, ",") {
			one, err := noteapi.ParseRange("bytes="+spec, size)
			if err != nil {
				continue
			}
			for _, r := range one {
				for b := r[0]; b <= r[1]; b++ {
					if !covered[b] {
						t.Fatalf("byte %d of spec %q is not in %v", b, spec, got)
					}
				}
			}
		}
	})
}
