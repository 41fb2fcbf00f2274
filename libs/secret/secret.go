// Package secret makes and checks the service's bearer secrets: license keys, activation
// IDs and session tokens. Secrets are random, stored only as SHA-256 hashes and compared in
// constant time. SHA-256 (not a slow password hash) is right here because every secret is
// at least 128 bits of CSPRNG output, so there is nothing to brute-force.
package secret

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
)

// New returns prefix followed by n random bytes in unpadded base64url.
func New(prefix string, n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms.
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// Hash returns the hex SHA-256 of s: the only form in which a secret is stored.
func Hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Equal reports whether two hashes are equal, in time independent of their contents.
func Equal(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
