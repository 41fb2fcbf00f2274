package note

import (
	"fmt"
	"mime"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sharenote/sharenote/libs/yamljson"
)

// maxFilenameBytes is the longest image filename accepted: the common file-system limit, and
// short enough to sit in a URL path and a database column.
const maxFilenameBytes = 255

// The canonical media types of the accepted image formats, as served back to readers.
const (
	mediaPNG  = "image/png"
	mediaJPEG = "image/jpeg"
	mediaGIF  = "image/gif"
	mediaWebP = "image/webp"
)

// The leading bytes that identify each accepted format.
const (
	sigPNG     = "\x89PNG\r\n\x1a\n"
	sigJPEG    = "\xff\xd8\xff"
	sigGIF87a  = "GIF87a"
	sigGIF89a  = "GIF89a"
	sigRIFF    = "RIFF"
	sigWebP    = "WEBP"
	webpOffset = 8 // "RIFF", a four-byte size, then "WEBP"
)

// imageFormat is the media type and format name of an accepted image's filename, by
// its extension (case-insensitively); ok is false for any other name.
func imageFormat(filename string) (mediaType, format string, ok bool) {
	dot := strings.LastIndexByte(filename, '.')
	if dot < 0 {
		return "", "", false
	}
	switch asciiLower(filename[dot+1:]) {
	case "png":
		return mediaPNG, "PNG", true
	case "jpg", "jpeg":
		return mediaJPEG, "JPEG", true
	case "gif":
		return mediaGIF, "GIF", true
	case "webp":
		return mediaWebP, "WebP", true
	}
	return "", "", false
}

// ValidFilename reports whether name can be used as an image's filename. The name becomes a
// path segment of the public image URL and a key in storage, so anything that could change
// the meaning of a path is refused: separators ("/" and "\"), "..", names made only of dots,
// NUL and other control characters, invalid UTF-8, the empty name and names over 255 bytes.
// Unicode format characters (category Cf: bidirectional overrides such as U+202E, zero-width
// characters such as U+200B, the byte order mark U+FEFF, soft hyphens, tag characters) are
// refused too: they are invisible, so a name could read as "photo.png" to the author and to
// readers of the note while being another name, or show its extension reversed.
func ValidFilename(name string) bool {
	if name == "" || len(name) > maxFilenameBytes || !utf8.ValidString(name) {
		return false
	}
	if strings.Contains(name, "..") || strings.Trim(name, ".") == "" {
		return false
	}
	for _, r := range name {
		if r == '/' || r == '\\' || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}

// CheckImage applies the image checks of an upload: the extension names an accepted format
// (PNG, JPEG, GIF or WebP, case-insensitively), the declared media type agrees with the
// extension, and the bytes start with that format's signature. All three must agree because
// each is chosen by the client: a file that says it is a PNG in one place and is something
// else in another must not be served to readers as an image. The returned media type is the
// canonical one to serve the image with. Every failure, and an invalid filename, is an error
// wrapping ErrInvalidImage whose reason names the file.
func CheckImage(filename, declaredType string, data []byte) (mediaType string, err error) {
	if !ValidFilename(filename) {
		return "", fmt.Errorf("%w: %s: a filename must be 1 to %d bytes of UTF-8 without /, \\, .., or control or invisible format characters",
			ErrInvalidImage, yamljson.Quote(filename), maxFilenameBytes)
	}

	if strings.LastIndexByte(filename, '.') < 0 {
		return "", fmt.Errorf("%w: %s: the filename needs an extension: png, jpg, jpeg, gif or webp", ErrInvalidImage, filename)
	}
	mediaType, format, ok := imageFormat(filename)
	if !ok {
		return "", fmt.Errorf("%w: %s: the extension must be png, jpg, jpeg, gif or webp", ErrInvalidImage, filename)
	}

	declared, _, perr := mime.ParseMediaType(declaredType)
	if perr != nil {
		return "", fmt.Errorf("%w: %s: the declared media type is missing or malformed, expected %s", ErrInvalidImage, filename, mediaType)
	}
	// ParseMediaType lowercases the type. image/jpg is not registered but is sent by enough
	// clients that refusing it would only punish the author.
	if declared != mediaType && (mediaType != mediaJPEG || declared != "image/jpg") {
		return "", fmt.Errorf("%w: %s: the declared media type %s does not match the extension, expected %s",
			ErrInvalidImage, filename, yamljson.Quote(declared), mediaType)
	}

	if !hasSignature(mediaType, data) {
		return "", fmt.Errorf("%w: %s: the bytes are not a %s image", ErrInvalidImage, filename, format)
	}
	return mediaType, nil
}

// hasSignature reports whether data starts with the signature of the format of mediaType.
func hasSignature(mediaType string, data []byte) bool {
	switch mediaType {
	case mediaPNG:
		return hasPrefix(data, sigPNG)
	case mediaJPEG:
		return hasPrefix(data, sigJPEG)
	case mediaGIF:
		return hasPrefix(data, sigGIF87a) || hasPrefix(data, sigGIF89a)
	case mediaWebP:
		return hasPrefix(data, sigRIFF) && len(data) >= webpOffset+len(sigWebP) &&
			string(data[webpOffset:webpOffset+len(sigWebP)]) == sigWebP
	default:
		return false
	}
}

func hasPrefix(data []byte, prefix string) bool {
	return len(data) >= len(prefix) && string(data[:len(prefix)]) == prefix
}

// asciiLower lowercases only A–Z: Unicode case mapping would let names such as "gİf" pass as
// a known extension.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}
