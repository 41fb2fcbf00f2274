package testkit

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"
)

// picture is a tiny two-colour image for the encoders below.
func picture() image.Image {
	img := image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.White, color.Black})
	img.SetColorIndex(1, 2, 1)
	return img
}

func encode(t testing.TB, enc func(*bytes.Buffer) error) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := enc(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// PNG returns a small valid PNG.
func PNG(t testing.TB) []byte {
	return encode(t, func(b *bytes.Buffer) error { return png.Encode(b, picture()) })
}

// JPEG returns a small valid JPEG.
func JPEG(t testing.TB) []byte {
	return encode(t, func(b *bytes.Buffer) error { return jpeg.Encode(b, picture(), nil) })
}

// GIF returns a small valid GIF.
func GIF(t testing.TB) []byte {
	return encode(t, func(b *bytes.Buffer) error { return gif.Encode(b, picture(), nil) })
}

// WebP returns a minimal WebP: the RIFF container header, "WEBP", a VP8 chunk header and a
// few payload bytes, enough for the signature check.
func WebP() []byte {
	payload := []byte("VP8 \x04\x00\x00\x00\x00\x00\x00\x00")
	b := []byte("RIFF")
	b = binary.LittleEndian.AppendUint32(b, uint32(4+len(payload)))
	b = append(b, "WEBP"...)
	return append(b, payload...)
}

// PNGOfSize returns a valid PNG padded to exactly n bytes: decoders stop at the IEND
// chunk, so trailing bytes leave it a valid image and the size can be chosen to the byte.
func PNGOfSize(t testing.TB, n int) []byte {
	t.Helper()
	b := PNG(t)
	if n < len(b) {
		t.Fatalf("a PNG needs at least %d bytes", len(b))
	}
	return append(b, make([]byte, n-len(b))...)
}
