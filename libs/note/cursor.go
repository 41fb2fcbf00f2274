package note

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
)

// Cursor wire format, before base64url: a version byte, CreatedMS as an unsigned varint, the
// 24-byte CUID, then the first 16 bytes of HMAC-SHA256(key, macDomain ‖ len(account) ‖
// account ‖ everything before the MAC).
const (
	cursorVersion = 1
	// cursorMACBytes is 128 bits: forging a cursor stays out of reach while the string
	// stays short enough for a query parameter.
	cursorMACBytes = 16
	cursorCUIDLen  = 24
	// cursorMaxLen bounds the text DecodeCursor looks at; real cursors are about 64 chars.
	cursorMaxLen = 256
	// macDomain separates cursor MACs from any other MAC made with the same key.
	macDomain = "sharenote/list-cursor\x00"
)

// EncodeCursor returns the opaque next_cursor for position c of accountCUID's list. The
// cursor is tamper-evident and bound to the account: a client can hand it back unchanged but
// cannot edit it, forge one, or replay another account's, because paging trusts the position
// it carries. The text is base64url without padding, safe in a URL. EncodeCursor does not
// validate c: a Cursor with a negative CreatedMS or a CUID that is not 24 characters of
// [a-z0-9] encodes to a string DecodeCursor rejects.
func EncodeCursor(key []byte, accountCUID string, c Cursor) string {
	payload := make([]byte, 0, 1+binary.MaxVarintLen64+len(c.CUID)+cursorMACBytes)
	payload = append(payload, cursorVersion)
	payload = binary.AppendUvarint(payload, uint64(c.CreatedMS))
	payload = append(payload, c.CUID...)
	payload = append(payload, cursorMAC(key, accountCUID, payload)...)
	return base64.RawURLEncoding.EncodeToString(payload)
}

// DecodeCursor returns the position encoded in s by EncodeCursor with the same key and
// accountCUID. Anything else — too long, not canonical base64url, another version or layout,
// a MAC that does not verify (another key, another account, an edited byte), a negative time
// or a malformed CUID — is an error wrapping ErrInvalidCursor, so that a client learns its
// cursor is unusable instead of silently getting the wrong page.
func DecodeCursor(key []byte, accountCUID, s string) (Cursor, error) {
	if len(s) == 0 || len(s) > cursorMaxLen {
		return Cursor{}, invalidCursor("wrong length")
	}
	// The decoder skips "\r" and "\n"; refusing every character outside the alphabet keeps
	// the encoding canonical, so only the exact string EncodeCursor produced is accepted.
	for i := 0; i < len(s); i++ {
		if !isBase64URL(s[i]) {
			return Cursor{}, invalidCursor("not base64url")
		}
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return Cursor{}, invalidCursor("not base64url")
	}
	if len(raw) < 1+1+cursorCUIDLen+cursorMACBytes || raw[0] != cursorVersion {
		return Cursor{}, invalidCursor("unknown format")
	}

	body, mac := raw[:len(raw)-cursorMACBytes], raw[len(raw)-cursorMACBytes:]
	if !hmac.Equal(mac, cursorMAC(key, accountCUID, body)) {
		return Cursor{}, invalidCursor("not issued for this account")
	}

	ms, n := binary.Uvarint(body[1:])
	if n <= 0 || n != len(binary.AppendUvarint(nil, ms)) {
		return Cursor{}, invalidCursor("malformed time")
	}
	if ms > math.MaxInt64 {
		return Cursor{}, invalidCursor("negative time")
	}
	cuid := body[1+n:]
	if !isCursorCUID(cuid) {
		return Cursor{}, invalidCursor("malformed id")
	}
	return Cursor{CreatedMS: int64(ms), CUID: string(cuid)}, nil
}

// cursorMAC authenticates body for accountCUID. The account is length-prefixed so that no
// other account and body can produce the same MAC input.
func cursorMAC(key []byte, accountCUID string, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(macDomain))
	m.Write(binary.AppendUvarint(nil, uint64(len(accountCUID))))
	m.Write([]byte(accountCUID))
	m.Write(body)
	return m.Sum(nil)[:cursorMACBytes]
}

func isCursorCUID(b []byte) bool {
	if len(b) != cursorCUIDLen {
		return false
	}
	for _, c := range b {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

func isBase64URL(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

func invalidCursor(reason string) error {
	return fmt.Errorf("%w: %s", ErrInvalidCursor, reason)
}
