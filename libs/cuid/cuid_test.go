package cuid_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/cuid"
)

// shape is the definition of a cuid in docs/api.md "Naming and formats", written
// independently of the package.
var shape = regexp.MustCompile(`^[a-z][a-z0-9]{23}$`)

func TestNewHasTheContractShape(t *testing.T) {
	if cuid.Length != 24 {
		t.Fatalf("Length = %d, want 24", cuid.Length)
	}
	for range 1000 {
		id := cuid.New()
		if len(id) != 24 || !shape.MatchString(id) {
			t.Fatalf("New() = %q, want 24 characters of [a-z0-9] starting with a letter", id)
		}
		if !cuid.Valid(id) {
			t.Fatalf("Valid(New()) = false for %q", id)
		}
	}
}

func TestNewIsUnique(t *testing.T) {
	const n = 10_000
	seen := make(map[string]bool, n)
	for range n {
		id := cuid.New()
		if seen[id] {
			t.Fatalf("New() repeated %q within %d ids", id, n)
		}
		seen[id] = true
	}
}

func TestValid(t *testing.T) {
	cases := []struct {
		name string
		s    string
		want bool
	}{
		{"a well-formed id is valid", "a1b2c3d4e5f6g7h8i9j0klmn", true},
		{"all letters is valid", "abcdefghijklmnopqrstuvwx", true},
		{"a letter then digits is valid", "z00000000000000000000000", true},
		{"empty is invalid", "", false},
		{"23 characters is too short", "a1b2c3d4e5f6g7h8i9j0klm", false},
		{"25 characters is too long", "a1b2c3d4e5f6g7h8i9j0klmno", false},
		{"an uppercase letter is invalid", "a1b2c3d4e5f6g7h8i9j0klmN", false},
		{"an uppercase first letter is invalid", "A1b2c3d4e5f6g7h8i9j0klmn", false},
		{"a leading digit is invalid", "01b2c3d4e5f6g7h8i9j0klmn", false},
		{"a hyphen is invalid", "a1b2c3d4e5f6-7h8i9j0klmn", false},
		{"an underscore is invalid", "a1b2c3d4e5f6_7h8i9j0klmn", false},
		{"a dot is invalid", "a1b2c3d4e5f6g7h8i9j0klm.", false},
		{"a slash is invalid", "a1b2c3d4e5f6g7h8/9j0klmn", false},
		{"a space is invalid", "a1b2c3d4e5f6 7h8i9j0klmn", false},
		{"a NUL byte is invalid", "a1b2c3d4e5f6\x007h8i9j0klmn", false},
		{"a non-ASCII letter is invalid even at 24 bytes", "a1b2c3d4e5f6g7h8i9j0klé", false},
		{"a path traversal is invalid", "../../../../../../etc/pa", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := cuid.Valid(tc.s); got != tc.want {
				t.Fatalf("Valid(%q) = %v, want %v", tc.s, got, tc.want)
			}
		})
	}
}

// chiSquare returns Pearson's statistic of counts against a uniform distribution.
func chiSquare(counts map[byte]int, symbols string) float64 {
	total := 0
	for _, c := range counts {
		total += c
	}
	expected := float64(total) / float64(len(symbols))
	var x2 float64
	for i := range len(symbols) {
		d := float64(counts[symbols[i]]) - expected
		x2 += d * d / expected
	}
	return x2
}

// TestNewIsUniform checks that every character is equally likely, the property that makes
// a cuid's ~119 bits of entropy real. The bounds are about ten times the degrees of freedom
// (the statistic's mean), so a correct generator fails with a probability far below 1e-20,
// while the modulo bias of mapping bytes to 36 symbols without rejection scores about 900.
func TestNewIsUniform(t *testing.T) {
	const (
		ids     = 20_000
		letters = "abcdefghijklmnopqrstuvwxyz"
		rest    = letters + "0123456789"
	)
	first, others := map[byte]int{}, map[byte]int{}
	for range ids {
		id := cuid.New()
		first[id[0]]++
		for i := 1; i < len(id); i++ {
			others[id[i]]++
		}
	}
	if x2 := chiSquare(first, letters); x2 > 250 {
		t.Errorf("first character: chi-square %.1f over 25 degrees of freedom; the letters are not uniform: %v", x2, first)
	}
	if x2 := chiSquare(others, rest); x2 > 350 {
		t.Errorf("other characters: chi-square %.1f over 35 degrees of freedom; the alphabet is not uniform: %v", x2, others)
	}
	if len(first) != len(letters) || len(others) != len(rest) {
		t.Errorf("not every symbol occurs: first %d of %d, others %d of %d", len(first), len(letters), len(others), len(rest))
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range []string{"", cuid.New(), "a1b2c3d4e5f6g7h8i9j0klmn", "A1b2c3d4e5f6g7h8i9j0klmn", "01b2c3d4e5f6g7h8i9j0klmn",
		"a1b2c3d4e5f6g7h8i9j0klm", strings.Repeat("z", 24), "a1b2c3d4e5f6g7h8i9j0klé", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := cuid.Valid(s), shape.MatchString(s); got != want {
			t.Fatalf("Valid(%q) = %v, but the contract's shape says %v", s, got, want)
		}
	})
}
