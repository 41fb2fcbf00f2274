// Package cuid makes the API's identifiers (docs/api.md "Naming and formats"):
// CUID2-style, 24 lowercase characters of [a-z0-9], the first a letter, drawn from a
// CSPRNG. A publication's cuid is the only secret protecting its URL, so the 23 free
// characters carry about 119 bits of entropy.
package cuid

import "crypto/rand"

// Length is the length of every cuid.
const Length = 24

const (
	letters  = "abcdefghijklmnopqrstuvwxyz"
	alphabet = letters + "0123456789"
)

// New returns a fresh random cuid. Random bytes are mapped to the alphabet by rejection
// sampling, so every character is uniformly distributed.
func New() string {
	out := make([]byte, 0, Length)
	var buf [2 * Length]byte
	for len(out) < Length {
		_, _ = rand.Read(buf[:]) // crypto/rand.Read never fails on supported platforms.
		for _, r := range buf {
			if len(out) == 0 {
				if r < 26*9 { // 234 is the largest multiple of 26 below 256.
					out = append(out, letters[r%26])
				}
			} else if len(out) < Length && r < 36*7 { // 252 = 7 × 36.
				out = append(out, alphabet[r%36])
			}
		}
	}
	return string(out)
}

// Valid reports whether s has the shape of a cuid. It is a cheap guard that lets handlers
// answer 404 without a database round trip for garbage identifiers.
func Valid(s string) bool {
	if len(s) != Length || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}
