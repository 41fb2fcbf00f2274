package note_test

import (
	"encoding/base64"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/sharenote/sharenote/libs/note"
)

var (
	cursorKey   = []byte("0123456789abcdef0123456789abcdef")
	otherKey    = []byte("fedcba9876543210fedcba9876543210")
	accountA    = "a1b2c3d4e5f6g7h8i9j0k1l2"
	accountB    = "z9y8x7w6v5u4t3s2r1q0p9o8"
	sampleCUIDs = []string{"abcdefghijklmnopqrstuvwx", "q0000000000000000000000z"}
)

func TestCursorRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		c    note.Cursor
	}{
		{"zero time", note.Cursor{CreatedMS: 0, CUID: sampleCUIDs[0]}},
		{"a real time", note.Cursor{CreatedMS: 1_795_000_000_000, CUID: sampleCUIDs[1]}},
		{"the largest time", note.Cursor{CreatedMS: math.MaxInt64, CUID: sampleCUIDs[0]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := note.EncodeCursor(cursorKey, accountA, tt.c)
			if len(s) > 256 || strings.ContainsFunc(s, func(r rune) bool { return !isBase64URLRune(r) }) {
				t.Errorf("cursor %q is not short base64url", s)
			}
			got, err := note.DecodeCursor(cursorKey, accountA, s)
			if err != nil || got != tt.c {
				t.Errorf("DecodeCursor(EncodeCursor(%v)) = %v, %v", tt.c, got, err)
			}
		})
	}
}

func TestDecodeCursorRejects(t *testing.T) {
	valid := note.EncodeCursor(cursorKey, accountA, note.Cursor{CreatedMS: 1_795_000_000_000, CUID: sampleCUIDs[0]})
	raw, _ := base64.RawURLEncoding.DecodeString(valid)
	tests := []struct {
		name    string
		key     []byte
		account string
		s       string
	}{
		{"empty", cursorKey, accountA, ""},
		{"another account's cursor", cursorKey, accountB, valid},
		{"a cursor made with another key", otherKey, accountA, valid},
		{"truncated by one character", cursorKey, accountA, valid[:len(valid)-1]},
		{"truncated to half", cursorKey, accountA, valid[:len(valid)/2]},
		{"one character appended", cursorKey, accountA, valid + "A"},
		{"padding appended", cursorKey, accountA, valid + "="},
		{"standard base64 alphabet", cursorKey, accountA, strings.NewReplacer("-", "+", "_", "/").Replace(valid) + "+/"},
		{"a newline inside", cursorKey, accountA, valid[:10] + "\n" + valid[10:]},
		{"not base64", cursorKey, accountA, "not a cursor!"},
		{"too long", cursorKey, accountA, strings.Repeat("A", 257)},
		{"an offset instead of a cursor", cursorKey, accountA, "50"},
		{"another version", cursorKey, accountA, base64.RawURLEncoding.EncodeToString(append([]byte{2}, raw[1:]...))},
		{"negative time", cursorKey, accountA, note.EncodeCursor(cursorKey, accountA, note.Cursor{CreatedMS: -1, CUID: sampleCUIDs[0]})},
		{"uppercase CUID", cursorKey, accountA, note.EncodeCursor(cursorKey, accountA, note.Cursor{CreatedMS: 1, CUID: strings.ToUpper(sampleCUIDs[0])})},
		{"short CUID", cursorKey, accountA, note.EncodeCursor(cursorKey, accountA, note.Cursor{CreatedMS: 1, CUID: "abc"})},
		{"long CUID", cursorKey, accountA, note.EncodeCursor(cursorKey, accountA, note.Cursor{CreatedMS: 1, CUID: sampleCUIDs[0] + "a"})},
		{"CUID with punctuation", cursorKey, accountA, note.EncodeCursor(cursorKey, accountA, note.Cursor{CreatedMS: 1, CUID: "abcdefghijklmnopqrstuv-x"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := note.DecodeCursor(tt.key, tt.account, tt.s)
			if !errors.Is(err, note.ErrInvalidCursor) {
				t.Errorf("DecodeCursor(%q) = %v, %v, want ErrInvalidCursor", tt.s, got, err)
			}
		})
	}
}

// Changing any single byte of a cursor, or any bit of its decoded form, must invalidate it.
func TestDecodeCursorDetectsEveryTamperedByte(t *testing.T) {
	valid := note.EncodeCursor(cursorKey, accountA, note.Cursor{CreatedMS: 1_795_000_000_000, CUID: sampleCUIDs[0]})
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := range len(valid) {
		for _, c := range []byte(alphabet) {
			if c == valid[i] {
				continue
			}
			s := valid[:i] + string(c) + valid[i+1:]
			if _, err := note.DecodeCursor(cursorKey, accountA, s); !errors.Is(err, note.ErrInvalidCursor) {
				t.Fatalf("character %d changed to %q: error = %v, want ErrInvalidCursor", i, c, err)
			}
		}
	}
	raw, err := base64.RawURLEncoding.DecodeString(valid)
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw {
		for bit := range 8 {
			flipped := append([]byte(nil), raw...)
			flipped[i] ^= 1 << bit
			s := base64.RawURLEncoding.EncodeToString(flipped)
			if _, err := note.DecodeCursor(cursorKey, accountA, s); !errors.Is(err, note.ErrInvalidCursor) {
				t.Fatalf("byte %d bit %d flipped: error = %v, want ErrInvalidCursor", i, bit, err)
			}
		}
	}
}

func FuzzDecodeCursor(f *testing.F) {
	for _, c := range []note.Cursor{
		{CreatedMS: 0, CUID: sampleCUIDs[0]},
		{CreatedMS: 1_795_000_000_000, CUID: sampleCUIDs[1]},
		{CreatedMS: math.MaxInt64, CUID: sampleCUIDs[0]},
	} {
		f.Add(note.EncodeCursor(cursorKey, accountA, c))
		f.Add(note.EncodeCursor(cursorKey, accountB, c))
	}
	f.Add("")
	f.Add("AQ")
	f.Add(strings.Repeat("_", 300))
	f.Fuzz(func(t *testing.T, s string) {
		c, err := note.DecodeCursor(cursorKey, accountA, s)
		if err != nil {
			if !errors.Is(err, note.ErrInvalidCursor) {
				t.Fatalf("DecodeCursor(%q) error %v does not wrap ErrInvalidCursor", s, err)
			}
			return
		}
		if again := note.EncodeCursor(cursorKey, accountA, c); again != s {
			t.Fatalf("DecodeCursor accepted %q, which EncodeCursor writes as %q", s, again)
		}
		if c.CreatedMS < 0 || len(c.CUID) != 24 {
			t.Fatalf("DecodeCursor(%q) accepted malformed %v", s, c)
		}
		if _, err := note.DecodeCursor(cursorKey, accountB, s); err == nil {
			t.Fatalf("cursor %q is accepted for two accounts", s)
		}
	})
}

func isBase64URLRune(r rune) bool {
	return 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-' || r == '_'
}
