package note_test

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/sharenote/sharenote/libs/note"
)

func TestValidFilename(t *testing.T) {
	tests := []struct {
		name     string
		filename string
		want     bool
	}{
		{"a simple name is valid", "photo.png", true},
		{"spaces and unicode are valid", "Ferien am Meer – ü.jpg", true},
		{"a single leading dot is valid", ".hidden.png", true},
		{"brackets are valid", "x[1].gif", true},
		{"255 bytes is the limit", strings.Repeat("a", 251) + ".png", true},
		{"empty is invalid", "", false},
		{"longer than 255 bytes is invalid", strings.Repeat("a", 252) + ".png", false},
		{"invalid UTF-8 is invalid", "a\xffb.png", false},
		{"a slash is invalid", "dir/photo.png", false},
		{"a backslash is invalid", `dir\photo.png`, false},
		{"NUL is invalid", "photo\x00.png", false},
		{"a newline is invalid", "photo\n.png", false},
		{"DEL is invalid", "photo\x7f.png", false},
		{"a C1 control character is invalid", "photo\u0085.png", false},
		{"dot-dot anywhere is invalid", "a..png", false},
		{"dot-dot alone is invalid", "..", false},
		{"a single dot is invalid", ".", false},
		{"only dots is invalid", "...", false},
		{"a right-to-left override is invalid", "photo\u202egnp.png", false},
		{"a zero-width space is invalid", "photo\u200b.png", false},
		{"a byte order mark is invalid", "\ufeffphoto.png", false},
		{"a zero-width joiner is invalid", "a\u200db.png", false},
		{"a soft hyphen is invalid", "pho\u00adto.png", false},
		{"a tag character is invalid", "a\U000e0041.png", false},
		{"an invisible separator is invalid", "a\u2063b.png", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := note.ValidFilename(tt.filename); got != tt.want {
				t.Errorf("ValidFilename(%q) = %v, want %v", tt.filename, got, tt.want)
			}
		})
	}
}

const (
	pngBytes  = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	jpegBytes = "\xff\xd8\xff\xe0\x00\x10JFIF"
	gif87     = "GIF87a\x01\x00\x01\x00"
	gif89     = "GIF89a\x01\x00\x01\x00"
	webpBytes = "RIFF\x24\x00\x00\x00WEBPVP8 "
)

func TestCheckImage(t *testing.T) {
	tests := []struct {
		name     string
		filename string
		declared string
		data     string
		want     string
	}{
		{"png", "a.png", "image/png", pngBytes, "image/png"},
		{"jpg", "a.jpg", "image/jpeg", jpegBytes, "image/jpeg"},
		{"jpeg", "a.jpeg", "image/jpeg", jpegBytes, "image/jpeg"},
		{"image/jpg alias is accepted for jpeg", "a.jpeg", "image/jpg", jpegBytes, "image/jpeg"},
		{"gif87a", "a.gif", "image/gif", gif87, "image/gif"},
		{"gif89a", "a.gif", "image/gif", gif89, "image/gif"},
		{"webp", "a.webp", "image/webp", webpBytes, "image/webp"},
		{"extension is case-insensitive", "A.PNG", "image/png", pngBytes, "image/png"},
		{"media type is case-insensitive and may carry parameters", "a.png", "Image/PNG; charset=binary", pngBytes, "image/png"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := note.CheckImage(tt.filename, tt.declared, []byte(tt.data))
			if err != nil || got != tt.want {
				t.Errorf("CheckImage() = %q, %v, want %q", got, err, tt.want)
			}
		})
	}
}

func TestCheckImageRejects(t *testing.T) {
	tests := []struct {
		name       string
		filename   string
		declared   string
		data       string
		wantReason string
	}{
		{"invalid filename", "../a.png", "image/png", pngBytes, `"../a.png": a filename must`},
		{"a format character in the filename", "gpj.\u202ephoto.png", "image/png", pngBytes, "a filename must"},
		{"no extension", "photo", "image/png", pngBytes, "photo: the filename needs an extension"},
		{"unsupported extension", "a.svg", "image/svg+xml", "<svg/>", "a.svg: the extension must be"},
		{"unicode look-alike of an extension", "a.g\u0130f", "image/gif", gif89, "the extension must be"},
		{"missing media type", "a.png", "", pngBytes, "a.png: the declared media type is missing or malformed"},
		{"malformed media type", "a.png", "image/", pngBytes, "missing or malformed"},
		{"media type of another format", "a.png", "image/jpeg", pngBytes, `a.png: the declared media type "image/jpeg" does not match`},
		{"generic binary media type", "a.png", "application/octet-stream", pngBytes, "does not match the extension"},
		{"image/jpg alias is not accepted for png", "a.png", "image/jpg", pngBytes, "does not match the extension"},
		{"png bytes that are jpeg", "a.png", "image/png", jpegBytes, "a.png: the bytes are not a PNG image"},
		{"jpeg bytes that are png", "a.jpg", "image/jpeg", pngBytes, "a.jpg: the bytes are not a JPEG image"},
		{"gif with an unknown version", "a.gif", "image/gif", "GIF88a", "a.gif: the bytes are not a GIF image"},
		{"webp without the WEBP marker", "a.webp", "image/webp", "RIFF\x24\x00\x00\x00WAVEfmt ", "the bytes are not a WebP image"},
		{"webp truncated after RIFF", "a.webp", "image/webp", "RIFF\x24\x00", "the bytes are not a WebP image"},
		{"empty data", "a.png", "image/png", "", "the bytes are not a PNG image"},
		{"truncated signature", "a.png", "image/png", pngBytes[:7], "the bytes are not a PNG image"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := note.CheckImage(tt.filename, tt.declared, []byte(tt.data))
			if !errors.Is(err, note.ErrInvalidImage) {
				t.Fatalf("CheckImage() = %q, %v, want ErrInvalidImage", got, err)
			}
			if got != "" {
				t.Errorf("media type = %q, want empty on error", got)
			}
			if !strings.Contains(err.Error(), tt.wantReason) {
				t.Errorf("error %q does not contain %q", err, tt.wantReason)
			}
		})
	}
}

func FuzzValidFilename(f *testing.F) {
	for _, seed := range []string{"photo.png", "", ".", "..", "a..b", "a/b", `a\b`, "a\x00", "\u0085", "é.png", "\xff",
		"a\u202egnp.exe", "\u200b.png", "\ufeffa.png", "a\u2066b\u2069.png", "\U000e0001x.gif"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if !note.ValidFilename(name) {
			return
		}
		if name == "" || len(name) > 255 || !utf8.ValidString(name) {
			t.Fatalf("ValidFilename(%q) accepted an empty, long or non-UTF-8 name", name)
		}
		if strings.ContainsAny(name, "/\\\x00") || strings.Contains(name, "..") || strings.Trim(name, ".") == "" {
			t.Fatalf("ValidFilename(%q) accepted a name that can change a path", name)
		}
		if i := strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }); i >= 0 {
			t.Fatalf("ValidFilename(%q) accepted a control or format character at byte %d", name, i)
		}
	})
}

func FuzzCheckImage(f *testing.F) {
	f.Add("a.png", "image/png", []byte(pngBytes))
	f.Add("a.JPG", "image/jpg", []byte(jpegBytes))
	f.Add("a.gif", "image/gif; x=y", []byte(gif87))
	f.Add("a.webp", "image/webp", []byte(webpBytes))
	f.Add("../a.png", "image/png", []byte(pngBytes))
	f.Add("a.webp", "image/webp", []byte("RIFF"))
	f.Fuzz(func(t *testing.T, filename, declared string, data []byte) {
		mediaType, err := note.CheckImage(filename, declared, data)
		if err != nil {
			if !errors.Is(err, note.ErrInvalidImage) || mediaType != "" {
				t.Fatalf("CheckImage() = %q, %v: want empty media type and ErrInvalidImage", mediaType, err)
			}
			return
		}
		if !note.ValidFilename(filename) {
			t.Fatalf("CheckImage accepted invalid filename %q", filename)
		}
		var sigs []string
		switch mediaType {
		case "image/png":
			sigs = []string{"\x89PNG\r\n\x1a\n"}
		case "image/jpeg":
			sigs = []string{"\xff\xd8\xff"}
		case "image/gif":
			sigs = []string{"GIF87a", "GIF89a"}
		case "image/webp":
			if len(data) < 12 || string(data[8:12]) != "WEBP" {
				t.Fatalf("CheckImage accepted WebP without marker: %q", data)
			}
			sigs = []string{"RIFF"}
		default:
			t.Fatalf("CheckImage returned unknown media type %q", mediaType)
		}
		ok := false
		for _, s := range sigs {
			ok = ok || strings.HasPrefix(string(data), s)
		}
		if !ok {
			t.Fatalf("CheckImage accepted %q as %s", data, mediaType)
		}
	})
}
